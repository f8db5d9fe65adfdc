/// The admission rule that ``BoundedChannel`` and ``PushBuffer`` share: an element enters a
/// buffer while fewer than `capacity` elements are buffered and, with a byte budget, while the
/// buffered bytes plus its weight stay within the budget. An element heavier than the whole
/// budget enters only an empty buffer, so it can never wait (or be refused) forever.
@usableFromInline
enum BufferAdmission {
    /// Whether an element of `weight` bytes may enter a buffer that holds `bufferedCount`
    /// elements of `bufferedBytes` bytes.
    @inlinable
    static func admits(
        weight: Int, bufferedCount: Int, bufferedBytes: Int, capacity: Int, byteBudget: Int?
    ) -> Bool {
        if bufferedCount == 0 { return true }
        guard bufferedCount < capacity else { return false }
        guard let byteBudget else { return true }
        return bufferedBytes + weight <= byteBudget
    }

    /// Raises the peaks to an occupancy of `count` elements of `bytes` bytes, if higher.
    @inlinable
    static func raisePeaks(_ peakCount: inout Int, _ peakBytes: inout Int64, count: Int, bytes: Int) {
        peakCount = Swift.max(peakCount, count)
        peakBytes = Swift.max(peakBytes, Int64(bytes))
    }
}
