extension PushBuffer {
    /// What the source is told after an event of the consumer's side: the push machine's effect.
    @usableFromInline
    enum SourceEffect: Sendable, Equatable {
        /// Nothing.
        case none
        /// The buffer drained below the low watermark after pause number `decidedAt`: run the
        /// resume callback, unless ``StateMachine/isResumeCurrent(_:)`` says a newer pause
        /// overtook it.
        case resume(decidedAt: Int)
        /// The stream stopped while the source was still producing: run its cancellation hook.
        case stop
    }

    /// The push buffer's decisions: the shared consumer side (``ChannelMachine`` over a
    /// ``ChannelCore``) and a source that is answered at once: enqueued with its demand (a
    /// ``Watermark``), spilled, or rejected.
    ///
    /// Generic over the handle it keeps for the suspended consumer, so ``PushBuffer/Storage``
    /// stores a continuation and tests store plain integers.
    ///
    /// The accepted elements form one queue: those in memory come first, then the records of the
    /// spill store (the backlog, see `PushBuffer+StateMachine+Spill.swift`). While the store holds
    /// records (or a read of them is in flight, or a write is reserved), every new element goes to
    /// the store too, so nothing overtakes; the consumer reads spilled records back into the (then
    /// empty) memory buffer.
    ///
    /// Invariants, beyond the core's (``checkProducerInvariants()``): no spill without a spill
    /// policy; a read-back only into an empty memory buffer; the overflow flag only on a failed
    /// stream.
    @usableFromInline
    struct StateMachine<Consumer>: ChannelMachine {
        @usableFromInline typealias Effect = SourceEffect
        @usableFromInline typealias Refill = SpillRead
        @usableFromInline typealias Item = WeightedQueue<Element>.Item

        @inlinable static var owner: StaticString { "PushBuffer" }
        @inlinable static var noEffect: SourceEffect { .none }

        @usableFromInline var core: ChannelCore<Element, Consumer>
        /// The demand answered to the source, from the buffered count (memory and spill store).
        @usableFromInline var watermark: Watermark
        /// Whether overflow spills (otherwise it fails).
        @usableFromInline let spills: Bool
        /// The spill store's records, as the machine counts them.
        @usableFromInline var spill = SpillLedger()
        /// The stream failed because it overflowed (capacity, spill limit, spill write): later
        /// yields are rejected rather than answered terminated.
        @usableFromInline var isOverflowed = false

        /// Creates an open, empty machine.
        ///
        /// - Parameters:
        ///   - capacity: the most elements the memory buffer holds; must be >= 1.
        ///   - byteBudget: the most bytes the memory buffer holds, if bounded; must be >= 0.
        ///   - highWatermark: the buffered count from which yields answer "pause"; >= 1.
        ///   - lowWatermark: the count below which a paused source resumes; 1...highWatermark.
        ///   - spills: whether overflow goes to a spill store.
        @inlinable
        init(capacity: Int, byteBudget: Int?, highWatermark: Int, lowWatermark: Int, spills: Bool) {
            precondition(highWatermark >= 1, "PushBuffer highWatermark must be at least 1")
            precondition(
                lowWatermark >= 1 && lowWatermark <= highWatermark,
                "PushBuffer lowWatermark must be in 1...highWatermark")
            core = ChannelCore(capacity: capacity, byteBudget: byteBudget, owner: Self.owner)
            watermark = Watermark(high: highWatermark, low: lowWatermark)
            self.spills = spills
        }

        // MARK: Producer events

        /// What ``PushBuffer/yield(_:)`` does.
        @usableFromInline
        enum YieldAction {
            /// Return ``PushBuffer/YieldResult/enqueued(_:)`` with this demand.
            case enqueued(Demand)
            /// Resume the waiting consumer with the element, then return `.enqueued(.keepGoing)`.
            case resumeConsumer(Consumer, Element)
            /// Write the element to the spill store, then report ``spillWritten(weight:)`` or
            /// ``spillFailed(_:spillLimit:)``. `rewind`: nothing is unread, so the store starts
            /// again at its beginning.
            case spill(rewind: Bool)
            /// Hand the element back as rejected; `stopSource`: run the cancellation hook (the
            /// first overflow).
            case reject(stopSource: Bool)
            /// Hand the element back as terminated: the stream has ended.
            case terminate
        }

        /// A producer yields an element of `weight` bytes.
        @inlinable
        mutating func yield(_ element: Element, weight: Int) -> YieldAction {
            defer { checkInvariants() }
            switch core.lifecycle {
            case .open: break
            case .failed where isOverflowed: return .reject(stopSource: false)
            case .finished, .failed, .terminated: return .terminate
            }
            if let consumer = core.handOver(weight: weight) {
                assert(!spill.isActive, "the consumer waited while records were spilled")
                return .resumeConsumer(consumer, element)
            }
            if !spill.isActive && core.queue.admits(weight: weight) {
                core.accept(element, weight: weight)
                return .enqueued(raiseDemand())
            }
            if spills {
                return .spill(rewind: reserveSpill())
            }
            let consumer = overflow(overflowError(spillLimit: nil))
            assert(consumer == nil, "the consumer waited while the buffer was full")
            return .reject(stopSource: true)
        }

        /// Whether a resume decided at pause `decidedAt` still stands: no pause was answered since,
        /// and the stream is still open.
        @inlinable
        func isResumeCurrent(_ decidedAt: Int) -> Bool {
            watermark.isCurrent(decidedAt) && core.isOpen
        }

        // MARK: The consumer's side, as the source sees it

        /// The records in the spill store.
        @inlinable
        var backlog: (count: Int, bytes: Int64) { (spill.records, spill.bytes) }

        @inlinable
        var isRefilling: Bool { spill.isReading }

        /// A source's element wakes a waiting consumer at once.
        @inlinable
        var consumerWakeThreshold: Int { 1 }

        /// An element left: the demand may rise again.
        @inlinable
        mutating func didDeliver(weight: Int) -> SourceEffect {
            guard let pause = watermark.didConsume(level: level), core.isOpen else { return .none }
            return .resume(decidedAt: pause)
        }

        /// The source ended the stream itself: it is not stopped.
        @inlinable
        mutating func didEnd() -> SourceEffect { .none }

        /// The consumer left: the spilled records are dropped with the buffer, and a source still
        /// producing is stopped.
        @inlinable
        mutating func didTerminate(afterEnd: Bool) -> SourceEffect {
            core.countDiscarded(count: spill.records, bytes: spill.bytes)
            spill.records = 0
            spill.bytes = 0
            return afterEnd ? .none : .stop
        }

        @inlinable
        func checkProducerInvariants() {
            assert(spill.records >= 0 && spill.bytes >= 0, "negative spill count")
            assert(spills || !spill.isActive, "a spill without a spill policy")
            assert(core.queue.isEmpty || !spill.isReading, "a read-back into a non-empty buffer")
            assert(!isOverflowed || !core.isOpen, "an open stream marked as overflowed")
        }

        // MARK: Bookkeeping

        /// Elements buffered in memory and in the spill store.
        @inlinable
        var level: Int { core.queue.count + spill.records }

        /// After an element arrived: the demand, "pause" from the crossing of the high watermark.
        @inlinable
        mutating func raiseDemand() -> Demand {
            watermark.didSend(level: level) ? .keepGoing : .pause
        }

        @inlinable
        func overflowError(spillLimit: Int64?) -> CapacityExceededError {
            CapacityExceededError(
                capacity: core.queue.capacity, bufferedCount: level,
                bufferedBytes: Int64(core.queue.bytes) + spill.bytes, spillLimit: spillLimit)
        }

        /// The open stream overflowed with `error`: the consumer receives it after the accepted
        /// elements. Returns the waiting consumer, to be woken.
        @inlinable
        mutating func overflow(_ error: any Error) -> Consumer? {
            isOverflowed = true
            guard case .ended(let waitingConsumer) = core.end(.failed(error)) else {
                preconditionFailure("PushBuffer overflowed after its stream ended")
            }
            return waitingConsumer
        }
    }
}

extension PushBuffer.StateMachine.YieldAction: Sendable where Consumer: Sendable {}
