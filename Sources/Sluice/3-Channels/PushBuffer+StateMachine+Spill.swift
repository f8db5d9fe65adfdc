extension PushBuffer {
    /// The spill store's records as the state machine counts them: how many, their weight, where
    /// the first unread one is, and whether a write or a read is in flight. No handle on the store
    /// itself: the storage's ``PushBuffer/Spill`` owns it.
    @usableFromInline
    struct SpillLedger {
        /// Records written and not yet handed to the consumer.
        @usableFromInline var records = 0
        /// The sum of their weights.
        @usableFromInline var bytes: Int64 = 0
        /// The store's position of the first unread record.
        @usableFromInline var readPosition: Int64 = 0
        /// A producer decided to spill and is writing (under the spill writer's lock).
        @usableFromInline var isReserved = false
        /// The consumer is reading records back.
        @usableFromInline var isReading = false

        @inlinable
        init() {}

        /// Whether new elements must go to the spill store to keep the order.
        @inlinable
        var isActive: Bool { records > 0 || isReserved || isReading }
    }

    /// A read of spilled records the consumer performs outside the lock: the push machine's
    /// `Refill`.
    @usableFromInline
    struct SpillRead: Sendable, Equatable {
        /// Where the first record starts, in the store's positions.
        @usableFromInline var position: Int64
        /// The most records to read back (they all exist; at most the capacity).
        @usableFromInline var maxRecords: Int
        /// The memory buffer's byte budget: read-back stops before the record that would pass
        /// it (``WeightedQueue/admits(weight:count:bytes:capacity:byteBudget:)``), as a yield
        /// would.
        @usableFromInline var byteBudget: Int?

        @inlinable
        init(position: Int64, maxRecords: Int, byteBudget: Int?) {
            self.position = position
            self.maxRecords = maxRecords
            self.byteBudget = byteBudget
        }
    }
}

extension PushBuffer.StateMachine {
    // The spill events: a producer's write, decided by `yield`, and the consumer's read-back,
    // decided by `next()` (through `refill()`).

    /// A yield that does not fit goes to the spill store: reserves the write.
    ///
    /// - Returns: whether the store starts again at its beginning (nothing is unread).
    @inlinable
    mutating func reserveSpill() -> Bool {
        let rewind = !spill.isActive
        if rewind { spill.readPosition = 0 }
        spill.isReserved = true
        return rewind
    }

    /// What a producer does after writing to the spill store.
    @usableFromInline
    enum SpillWrittenAction {
        /// Return ``PushBuffer/YieldResult/spilled(_:)`` with this demand, after resuming the
        /// consumer if given (with ``ConsumerWake/retry``).
        case spilled(PushBuffer.Demand, resumingConsumer: Consumer?)
        /// The consumer went away during the write: hand the element back as terminated.
        case terminate
    }

    /// The reserved record of `weight` bytes is in the spill store.
    @inlinable
    mutating func spillWritten(weight: Int) -> SpillWrittenAction {
        defer { checkInvariants() }
        assert(spill.isReserved)
        spill.isReserved = false
        guard core.isOpen else {
            // Only the consumer's departure can end the stream during a write (finish and fail
            // wait for the writer); nobody will read the record.
            return .terminate
        }
        spill.records += 1
        spill.bytes += Int64(weight)
        core.countAccepted(weight: weight)
        core.counters.elementsSpilled += 1
        core.counters.bytesSpilled += Int64(weight)
        core.counters.peakElementsInSpill = Swift.max(core.counters.peakElementsInSpill, spill.records)
        core.counters.peakBytesInSpill = Swift.max(core.counters.peakBytesInSpill, spill.bytes)
        let demand = raiseDemand()
        return .spilled(demand, resumingConsumer: core.takeWaitingConsumer())
    }

    /// What a producer does when its reserved spill write could not happen.
    @usableFromInline
    enum SpillFailedAction {
        /// Hand the element back as rejected; run the cancellation hook if `stopSource`;
        /// resume the consumer (with ``ConsumerWake/retry``) if given, so it sees the error.
        case reject(stopSource: Bool, resumingConsumer: Consumer?)
        /// The consumer went away meanwhile: hand the element back as terminated.
        case terminate
    }

    /// The reserved spill write failed with `error`, or would have passed the spill store's
    /// limit (then `error` is nil and the machine makes the ``CapacityExceededError``).
    @inlinable
    mutating func spillFailed(_ error: (any Error)?, spillLimit: Int64) -> SpillFailedAction {
        defer { checkInvariants() }
        assert(spill.isReserved)
        spill.isReserved = false
        guard core.isOpen else { return .terminate }
        let consumer = overflow(error ?? overflowError(spillLimit: spillLimit))
        return .reject(stopSource: true, resumingConsumer: consumer)
    }

    /// The memory buffer is empty: read spilled records back, as many as it admits.
    @inlinable
    mutating func refill() -> PushBuffer.SpillRead? {
        guard spill.records > 0 else { return nil }
        spill.isReading = true
        return PushBuffer.SpillRead(
            position: spill.readPosition, maxRecords: Swift.min(spill.records, core.queue.capacity),
            byteBudget: core.queue.byteBudget)
    }

    /// The consumer read `records` (with their weights) back from the spill store; the next
    /// unread record starts at `nextPosition`.
    @inlinable
    mutating func spillRead(_ records: [Item], nextPosition: Int64) -> NextAction {
        defer { checkInvariants() }
        assert(spill.isReading && core.queue.isEmpty && !records.isEmpty)
        spill.isReading = false
        if core.isTerminated { return .throwCancellation }  // counted as discarded already
        spill.records -= records.count
        spill.readPosition = nextPosition
        for item in records {
            spill.bytes -= Int64(item.weight)
            core.queue.append(item.element, weight: item.weight)
        }
        return next()
    }

    /// Reading spilled records back failed with `error`: the stream fails with it, and the
    /// records left in the store are discarded.
    ///
    /// - Returns: whether to run the cancellation hook (the stream was open).
    @inlinable
    mutating func spillReadFailed(_ error: any Error) -> Bool {
        defer { checkInvariants() }
        assert(spill.isReading)
        spill.isReading = false
        core.countDiscarded(count: spill.records, bytes: spill.bytes)
        spill.records = 0
        spill.bytes = 0
        let wasOpen: Bool
        switch core.lifecycle {
        case .terminated:
            return false
        case .open:
            wasOpen = true
        case .finished, .failed:
            wasOpen = false
        }
        core.lifecycle = .failed(error)
        isOverflowed = false
        return wasOpen
    }
}

extension PushBuffer.StateMachine.SpillWrittenAction: Sendable where Consumer: Sendable {}
extension PushBuffer.StateMachine.SpillFailedAction: Sendable where Consumer: Sendable {}
