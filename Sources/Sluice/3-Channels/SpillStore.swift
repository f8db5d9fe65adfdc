/// Where a ``PushBuffer`` keeps the elements it accepts past its capacity: records appended at
/// the end and read back in order.
///
/// A record is the bytes an element presents (``SpillCodable``) with the element's weight, kept
/// beside them so that read-back admits records by weight before decoding them. Records are read
/// back from position 0 (the first record after the store was made or ``reset()``), each one
/// saying where the next starts (`SpillRecord/nextPosition`); positions are the store's own
/// (byte offsets in a file, indices in an array). Once the consumer has read every record, the
/// buffer calls ``reset()`` before its next append, so a store holds at most the backlog's peak.
///
/// ``PushBuffer/OverflowPolicy/spill(directory:limit:)`` uses a store of its own: an unlinked
/// file in the directory, created at the first append. Give
/// `PushBuffer/OverflowPolicy/spill(to:limit:)` any other store, for example one in memory in
/// a test, or one that encrypts or compresses.
///
/// **Concurrency contract.** A store serves one buffer. ``append(_:weight:)``, ``reset()`` and
/// ``close()`` are never called at the same time as each other (the buffer's spill writer lock
/// orders them). ``record(at:)`` and ``read(_:into:)`` are called one at a time from the buffer's
/// read-back thread, possibly while an append runs, and only for records whose append has
/// returned; never during ``reset()`` or ``close()``. ``append(_:weight:)`` runs on the yielding
/// thread inside ``PushBuffer/yield(_:)``: it must take bounded time (a regular-file write, a
/// copy in memory) and never wait for the consumer. Reads run on a thread of the buffer's own,
/// off Swift's cooperative pool, and may block.
///
/// **Errors.** Whatever a method throws reaches the consumer as it is, after the elements
/// accepted before: an error of ``append(_:weight:)`` or ``reset()`` rejects the yield that
/// spilled (its element is handed back) and stops the source; an error of ``record(at:)`` or
/// ``read(_:into:)`` discards the records still in the store and stops the source unless it had
/// ended the stream itself.
package protocol SpillStore: Sendable {
    /// Appends a record: `bytes`, with the element's `weight` beside them.
    ///
    /// - Parameters:
    ///   - bytes: the element's bytes; valid only during the call.
    ///   - weight: the element's weight in bytes (>= 0), returned by ``record(at:)``.
    /// - Throws: the store's error when the record could not be kept.
    func append(_ bytes: UnsafeRawBufferPointer, weight: Int) throws

    /// Describes the record at `position`.
    ///
    /// - Parameter position: 0 for the first record, or the `SpillRecord/nextPosition` of the
    ///   record before.
    /// - Returns: the record's length, weight and the position of the next one.
    /// - Throws: the store's error when the record cannot be read.
    func record(at position: Int64) throws -> SpillRecord

    /// Copies the bytes of `record` into `buffer`.
    ///
    /// - Parameters:
    ///   - record: what ``record(at:)`` returned.
    ///   - buffer: exactly `SpillRecord/byteCount` bytes to fill.
    /// - Throws: the store's error when the bytes cannot be read.
    func read(_ record: SpillRecord, into buffer: UnsafeMutableRawBufferPointer) throws

    /// Forgets every record: the next append is at position 0. Called when everything appended
    /// was read back, before the next append.
    ///
    /// - Throws: the store's error; the append that needed the reset then fails with it.
    func reset() throws

    /// Releases the store's resources. Called once, when the buffer's stream ends (the consumer
    /// received the end, an error or `CancellationError`, or went away) or the buffer is freed;
    /// nothing is appended or read afterwards.
    func close()
}

/// Where one spilled element is, for a caller that writes its own `SpillStore`: its
/// position and length, as `SpillStore/record(at:)` returns them.
package struct SpillRecord: Sendable, Hashable {
    /// Where the record is, in the store's positions.
    package var position: Int64
    /// The length of the record's bytes.
    package var byteCount: Int
    /// The weight stored with the record: the element's weight in bytes.
    package var weight: Int
    /// Where the next record starts, in the store's positions.
    package var nextPosition: Int64

    /// Describes a record.
    ///
    /// - Parameters:
    ///   - position: where the record is.
    ///   - byteCount: the length of its bytes (>= 0).
    ///   - weight: the weight appended with it.
    ///   - nextPosition: where the next record starts.
    package init(position: Int64, byteCount: Int, weight: Int, nextPosition: Int64) {
        self.position = position
        self.byteCount = byteCount
        self.weight = weight
        self.nextPosition = nextPosition
    }
}
