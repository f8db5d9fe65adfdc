/// The state that every single-consumer channel keeps, whatever feeds it: the lifecycle, where
/// the one consumer is, the ids of waiters, the weighted buffer, and the counters.
///
/// ``BoundedChannel`` and ``PushBuffer`` differ only in their producer sides (senders that wait
/// for room; a source that is answered at once and may spill). Their state machines each hold a
/// core and conform to ``ChannelMachine``, whose extension implements the consumer's events once
/// on top of it. The core's methods are the bookkeeping steps those events and the producer
/// events share; none of them resumes or calls anything.
///
/// Waiters are identified by ids drawn from ``drawID()`` when a machine answers "suspend". The
/// caller then registers its continuation under that id in a second event; anything that happens
/// in between (an element arrives, the stream ends, cancellation) is recorded under the id and
/// answered at registration. That makes "cancelled before registered" an ordinary, tested order
/// of events.
///
/// - Note: The types are `@usableFromInline internal` rather than `private` so that the events
///   can be `@inlinable` (an unspecialised channel hop costs about five times a specialised one).
@usableFromInline
struct ChannelCore<Element, Consumer> {
    /// The stream's lifecycle.
    @usableFromInline
    enum Lifecycle {
        /// Accepting elements.
        case open
        /// The producers finished: the consumer drains the buffer, then receives nil.
        case finished
        /// The producers failed it (or it overflowed): the consumer drains, then receives the error.
        case failed(any Error)
        /// The consumer went away; `afterEnd`: the producers had finished or failed it first.
        case terminated(afterEnd: Bool)
    }

    /// Where the single consumer is.
    @usableFromInline
    enum ConsumerState {
        /// Not suspended in `next()`.
        case idle
        /// `next()` found nothing and drew `id`; its continuation is not registered yet.
        case pending(id: Int)
        /// Suspended in `next()` on `consumer`.
        case waiting(id: Int, consumer: Consumer)
    }

    /// How the producers end the stream.
    @usableFromInline
    enum Ending {
        /// The consumer receives nil after the buffered elements.
        case finished
        /// The consumer receives the error after the buffered elements.
        case failed(any Error)
    }

    /// What ``end(_:)`` found.
    @usableFromInline
    enum EndResult {
        /// The stream had already ended: nothing changed.
        case alreadyEnded
        /// The stream ended now; the consumer that was waiting (now idle), to be woken.
        case ended(waitingConsumer: Consumer?)
    }

    @usableFromInline var lifecycle: Lifecycle = .open
    @usableFromInline var consumer: ConsumerState = .idle
    /// Whether the iterator was made (a second one is a programming error).
    @usableFromInline var hasIterator = false
    @usableFromInline var nextID = 0
    /// The elements in memory, in order.
    @usableFromInline var queue: WeightedQueue<Element>
    /// Everything counted in ``ChannelStatistics`` but the buffer's level and peaks (kept by
    /// ``queue``) and the spill backlog (kept by the producer side).
    @usableFromInline var counters = ChannelStatistics()

    /// Creates an open, empty core.
    ///
    /// - Parameters:
    ///   - capacity: the most elements the buffer holds; must be >= 1.
    ///   - byteBudget: the most bytes (sum of weights) the buffer holds, if bounded; must be >= 0.
    ///   - owner: the channel type's name, for the messages of failed preconditions.
    @inlinable
    init(capacity: Int, byteBudget: Int?, owner: StaticString) {
        precondition(capacity >= 1, "\(owner) capacity must be at least 1, got \(capacity)")
        precondition((byteBudget ?? 0) >= 0, "\(owner) byteBudget must not be negative")
        queue = WeightedQueue(capacity: capacity, byteBudget: byteBudget)
    }

    /// Draws the id of a new waiter (a consumer or, in a ``BoundedChannel``, a sender).
    @inlinable
    mutating func drawID() -> Int {
        defer { nextID &+= 1 }
        return nextID
    }

    @inlinable
    var isOpen: Bool {
        if case .open = lifecycle { true } else { false }
    }

    @inlinable
    var isTerminated: Bool {
        if case .terminated = lifecycle { true } else { false }
    }

    // MARK: Producer steps

    /// Takes the waiting consumer out of its wait (it becomes idle) and returns it, if one waits.
    @inlinable
    mutating func takeWaitingConsumer() -> Consumer? {
        guard case .waiting(_, let handle) = consumer else { return nil }
        consumer = .idle
        return handle
    }

    /// If the consumer waits, hands it an element of `weight` bytes: counted in and out, and in
    /// the peaks as held alone for an instant. Returns the consumer to resume with the element.
    @inlinable
    mutating func handOver(weight: Int) -> Consumer? {
        guard let handle = takeWaitingConsumer() else { return nil }
        assert(queue.isEmpty, "the consumer waited while elements were buffered")
        countAccepted(weight: weight)
        countDelivered(weight: weight)
        queue.notePassedThrough(weight: weight)
        return handle
    }

    /// Puts an accepted element at the end of the buffer.
    @inlinable
    mutating func accept(_ element: Element, weight: Int) {
        queue.append(element, weight: weight)
        countAccepted(weight: weight)
    }

    @inlinable
    mutating func countAccepted(weight: Int) {
        counters.elementsAccepted += 1
        counters.bytesAccepted += Int64(weight)
    }

    @inlinable
    mutating func countDelivered(weight: Int) {
        counters.elementsDelivered += 1
        counters.bytesDelivered += Int64(weight)
    }

    @inlinable
    mutating func countDiscarded(count: Int, bytes: Int64) {
        counters.elementsDiscarded += count
        counters.bytesDiscarded += bytes
    }

    // MARK: Consumer and lifecycle steps

    /// Takes the first buffered element for the consumer, counted as delivered.
    @inlinable
    mutating func take() -> WeightedQueue<Element>.Item? {
        guard let item = queue.popFirst() else { return nil }
        countDelivered(weight: item.weight)
        return item
    }

    /// Ends an open stream with `ending`.
    @inlinable
    mutating func end(_ ending: Ending) -> EndResult {
        guard isOpen else { return .alreadyEnded }
        switch ending {
        case .finished: lifecycle = .finished
        case .failed(let error): lifecycle = .failed(error)
        }
        return .ended(waitingConsumer: takeWaitingConsumer())
    }

    /// The consumer went away: the stream is terminated and the buffer dropped (counted as
    /// discarded).
    ///
    /// - Returns: nil if it was already terminated; otherwise whether the producers had ended
    ///   the stream first.
    @inlinable
    mutating func terminate() -> Bool? {
        let afterEnd: Bool
        switch lifecycle {
        case .terminated: return nil
        case .open: afterEnd = false
        case .finished, .failed: afterEnd = true
        }
        lifecycle = .terminated(afterEnd: afterEnd)
        let dropped = queue.removeAll()
        countDiscarded(count: dropped.count, bytes: Int64(dropped.bytes))
        return afterEnd
    }

    /// The counters now, with the buffer's level and peaks and a producer side's `backlog` (the
    /// accepted elements it keeps outside the buffer).
    @inlinable
    func statistics(backlog: (count: Int, bytes: Int64)) -> ChannelStatistics {
        var statistics = counters
        statistics.elementsBuffered = queue.count
        statistics.bytesBuffered = Int64(queue.bytes)
        statistics.peakElementsBuffered = queue.peakCount
        statistics.peakBytesBuffered = Int64(queue.peakBytes)
        statistics.elementsInSpill = backlog.count
        statistics.bytesInSpill = backlog.bytes
        return statistics
    }
}

extension ChannelCore.Ending: Sendable {}
