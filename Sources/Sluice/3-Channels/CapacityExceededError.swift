/// A ``PushBuffer`` ran out of room for a source that cannot pause.
///
/// Thrown by the consumer's `next()` after it has received every element the buffer accepted,
/// in order: with the ``PushBuffer/OverflowPolicy/fail`` policy when a yield found the buffer at
/// its capacity (or byte budget), and with a spill policy when the spill store would have grown
/// past its limit. The yield that overflowed got its element back
/// (``PushBuffer/YieldResult/rejected(_:offset:)``), so the source knows exactly where the data
/// stopped.
public struct CapacityExceededError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The buffer's capacity in elements.
    public var capacity: Int
    /// The elements buffered (in memory and in the spill store) when the overflow happened.
    public var bufferedCount: Int
    /// The bytes buffered (sum of the elements' weights, in memory and in the spill store) when
    /// the overflow happened.
    public var bufferedBytes: Int64
    /// The spill limit in bytes, when the overflow was the spill store's; `nil` when it was
    /// the memory buffer's.
    public var spillLimit: Int64?

    /// Creates the error.
    ///
    /// - Parameters:
    ///   - capacity: the buffer's capacity in elements.
    ///   - bufferedCount: elements buffered at the overflow.
    ///   - bufferedBytes: bytes buffered at the overflow.
    ///   - spillLimit: the spill limit in bytes if the spill store overflowed, `nil` otherwise.
    @usableFromInline
    package init(capacity: Int, bufferedCount: Int, bufferedBytes: Int64, spillLimit: Int64? = nil) {
        self.capacity = capacity
        self.bufferedCount = bufferedCount
        self.bufferedBytes = bufferedBytes
        self.spillLimit = spillLimit
    }

    /// One line: which bound was reached (the capacity or the spill limit) and what was buffered.
    public var description: String {
        if let spillLimit {
            return "push buffer capacity exceeded: spill file limit of \(spillLimit) bytes reached "
                + "with \(bufferedCount) elements (\(bufferedBytes) bytes) buffered"
        }
        return "push buffer capacity exceeded: \(bufferedCount) of \(capacity) elements "
            + "(\(bufferedBytes) bytes) buffered and the source cannot pause"
    }
}
