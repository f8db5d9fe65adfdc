/// Counters of a ``BoundedChannel``: what went through it, how full it got, how long senders
/// waited.
///
/// A snapshot taken under the channel's lock: all fields are consistent with each other at
/// the moment ``BoundedChannel/statistics`` was read. Byte counts are the sum of the channel's
/// `weight` of each element (for a channel of ``Chunk``, the chunk's byte count); with the
/// default weight they stay 0.
///
/// - Note: These counters describe the channel, not the caller's view of it. To check that
///   nothing was lost, count on the callers' side: elements attempted = received by the
///   consumer + handed back by ``ChannelSendError``.
public struct ChannelStatistics: Sendable, Hashable {
    /// Elements accepted by ``BoundedChannel/send(_:)`` (into the buffer or handed straight to
    /// a waiting consumer). Elements handed back in a ``ChannelSendError`` are not counted.
    public var elementsSent: Int
    /// Bytes (weights) of the elements counted in ``elementsSent``.
    public var bytesSent: Int64
    /// Elements returned to the consumer by `next()`.
    public var elementsReceived: Int
    /// Bytes (weights) of the elements counted in ``elementsReceived``.
    public var bytesReceived: Int64
    /// Elements in the buffer now.
    public var bufferedCount: Int
    /// Bytes (weights) in the buffer now.
    public var bufferedBytes: Int64
    /// The most elements held at once: the largest ``bufferedCount`` seen, where an element
    /// handed straight to a waiting consumer counts as one held for that instant (so a channel
    /// that carried anything has a peak of at least 1).
    public var peakBufferedCount: Int
    /// The most bytes (weights) held at once: the largest ``bufferedBytes`` seen, counting an
    /// element handed straight to a waiting consumer as held alone for that instant.
    public var peakBufferedBytes: Int64
    /// Elements that were in the buffer when the consumer went away, dropped with it.
    public var elementsDiscarded: Int
    /// Bytes (weights) of the elements counted in ``elementsDiscarded``.
    public var bytesDiscarded: Int64
    /// How many times a sender suspended for room (counted when that sender resumes).
    public var suspensionCount: Int
    /// The total time senders spent suspended for room, measured by each sender with
    /// `ContinuousClock` and added when it resumes.
    public var suspendedDuration: Duration

    /// Creates statistics with every counter at zero.
    @inlinable
    public init() {
        elementsSent = 0
        bytesSent = 0
        elementsReceived = 0
        bytesReceived = 0
        bufferedCount = 0
        bufferedBytes = 0
        peakBufferedCount = 0
        peakBufferedBytes = 0
        elementsDiscarded = 0
        bytesDiscarded = 0
        suspensionCount = 0
        suspendedDuration = .zero
    }
}
