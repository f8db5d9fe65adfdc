/// Counters of a ``BoundedChannel`` or a ``PushBuffer``: what went in and out, what was
/// dropped, how full the buffer got, what went through a spill store, how long senders waited.
///
/// Both types count in the same words. *Accepted* elements went in (a send that returned, a yield
/// that answered `.enqueued` or `.spilled`); *delivered* ones came out of the consumer's `next()`;
/// *discarded* ones were accepted but dropped because the consumer went away; *buffered* ones are
/// in memory now. So at every moment, for elements and for bytes alike:
/// accepted = delivered + discarded + buffered + in spill.
///
/// A snapshot taken under the lock of the channel or buffer: all fields are consistent with each
/// other at the moment `statistics` was read. Byte counts are sums of the `weight` of each element
/// given at creation (for ``Chunk``, its byte count); with the default weight they stay 0.
///
/// - Note: These counters describe the channel, not the callers' view of it. To check that
///   nothing was lost, count on the callers' side: elements offered = delivered + discarded +
///   handed back (by a ``BoundedChannel/SendError``, or by a `.rejected` or `.terminated` yield).
public struct ChannelStatistics: Sendable, Hashable {
    /// Elements taken in: sends that returned (into the buffer, or handed straight to a waiting
    /// consumer), yields answered `.enqueued` or `.spilled`. Elements handed back are not counted.
    public var elementsAccepted: Int
    /// Bytes (weights) of the elements counted in ``elementsAccepted``.
    public var bytesAccepted: Int64
    /// Elements returned to the consumer by `next()`.
    public var elementsDelivered: Int
    /// Bytes (weights) of the elements counted in ``elementsDelivered``.
    public var bytesDelivered: Int64
    /// Accepted elements dropped, undelivered, because the consumer went away (its task was
    /// cancelled or it stopped iterating), or because reading a ``PushBuffer``'s spill store back
    /// failed.
    public var elementsDiscarded: Int
    /// Bytes (weights) of the elements counted in ``elementsDiscarded``.
    public var bytesDiscarded: Int64
    /// Elements in the memory buffer now.
    public var elementsBuffered: Int
    /// Bytes (weights) in the memory buffer now.
    public var bytesBuffered: Int64
    /// The most elements the memory buffer held at once: the largest ``elementsBuffered`` seen,
    /// records read back from a spill store included, where an element handed straight to a
    /// waiting consumer counts as one held for that instant (so a channel that carried anything
    /// has a peak of at least 1).
    public var peakElementsBuffered: Int
    /// The most bytes (weights) the memory buffer held at once, counted as
    /// ``peakElementsBuffered`` is.
    public var peakBytesBuffered: Int64
    /// Accepted elements that went through a ``PushBuffer``'s spill store (always 0 for a
    /// ``BoundedChannel``, which never spills).
    public var elementsSpilled: Int
    /// Bytes (weights) of the elements counted in ``elementsSpilled``.
    public var bytesSpilled: Int64
    /// Elements in the spill store now, not yet read back.
    public var elementsInSpill: Int
    /// Bytes (weights) of the elements counted in ``elementsInSpill``.
    public var bytesInSpill: Int64
    /// The most elements waiting in the spill store at once.
    public var peakElementsInSpill: Int
    /// The most bytes (weights) waiting in the spill store at once.
    public var peakBytesInSpill: Int64
    /// How many times a sender of a ``BoundedChannel`` suspended for room (counted when that
    /// sender resumes). Always 0 for a ``PushBuffer``, whose producers never wait.
    public var suspensionCount: Int
    /// The total time senders spent suspended for room, measured by each sender with
    /// `ContinuousClock` and added when it resumes.
    public var suspendedDuration: Duration

    /// Creates statistics with every counter at zero.
    @inlinable
    package init() {
        elementsAccepted = 0
        bytesAccepted = 0
        elementsDelivered = 0
        bytesDelivered = 0
        elementsDiscarded = 0
        bytesDiscarded = 0
        elementsBuffered = 0
        bytesBuffered = 0
        peakElementsBuffered = 0
        peakBytesBuffered = 0
        elementsSpilled = 0
        bytesSpilled = 0
        elementsInSpill = 0
        bytesInSpill = 0
        peakElementsInSpill = 0
        peakBytesInSpill = 0
        suspensionCount = 0
        suspendedDuration = .zero
    }
}
