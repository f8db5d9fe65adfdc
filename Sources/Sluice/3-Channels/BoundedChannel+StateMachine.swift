extension BoundedChannel {
    /// The channel's decisions: the shared consumer side (``ChannelMachine`` over a
    /// ``ChannelCore``) and the senders, who wait in line for room.
    ///
    /// Generic over the handles it stores for suspended senders and the suspended consumer, so
    /// ``BoundedChannel/Storage`` stores continuations and tests store plain integers. A sender
    /// told to suspend registers its handle under its id in a second event, as the consumer does
    /// (see ``ChannelCore``): a send resolved in between is answered at registration.
    ///
    /// Invariants, beyond the core's (``checkProducerInvariants()``): senders wait only while the
    /// channel is open and the buffer (with what the consumer holds from a batch) is non-empty:
    /// an empty buffer is at or below any low watermark and admits any element, so a waiting
    /// consumer and waiting senders never coexist; a registered sender is a waiting one.
    @usableFromInline
    struct StateMachine<Sender, Consumer>: ChannelMachine {
        @usableFromInline typealias SendFailure = BoundedChannel<Element>.SendError
        @usableFromInline typealias SendResult = Result<Void, SendFailure>
        @usableFromInline typealias Effect = [SenderResumption]
        @usableFromInline typealias Refill = Never

        /// A sender waiting for room, in arrival order, with the element it offers; its handle
        /// may not be registered yet.
        @usableFromInline typealias Waiter = (id: Int, offered: WeightedQueue<Element>.Item)

        /// A suspended sender to resume, and with what: `.success` if its element was enqueued,
        /// the error with the element otherwise. The effect of the machine's events on the senders.
        @usableFromInline typealias SenderResumption = (sender: Sender, result: SendResult)

        @inlinable static var owner: StaticString { "BoundedChannel" }
        @inlinable static var noEffect: [SenderResumption] { [] }

        @usableFromInline var core: ChannelCore<Element, Consumer>
        /// Senders waiting for room, first come first served.
        @usableFromInline var waiters: [Waiter] = []
        /// Handles of waiting senders that have registered.
        @usableFromInline var senderContinuations: [Int: Sender] = [:]
        /// Answers for senders resolved before they registered their handle.
        @usableFromInline var earlyResults: [Int: SendResult] = [:]
        /// Waiting senders are admitted only once the buffer (with what the consumer holds) has
        /// drained to this many elements; `capacity - 1` admits them as soon as there is room.
        @usableFromInline let lowWatermark: Int
        /// A consumer waiting on an empty buffer is woken once this many elements are buffered,
        /// or by ``flush()``, the end of the stream, or a sender that must wait; 1: at once.
        @usableFromInline let consumerWakeThreshold: Int

        /// Creates an open, empty machine.
        ///
        /// - Parameters:
        ///   - capacity: the most elements the buffer holds; must be >= 1.
        ///   - byteBudget: the most bytes (sum of weights) the buffer holds, if bounded;
        ///     must be >= 0.
        ///   - lowWatermark: waiting senders resume once at most this many elements are buffered;
        ///     in `0..<capacity`, default `capacity - 1` (as soon as there is room).
        @inlinable
        init(capacity: Int, byteBudget: Int?, lowWatermark: Int? = nil, consumerWakeThreshold: Int = 1) {
            core = ChannelCore(capacity: capacity, byteBudget: byteBudget, owner: Self.owner)
            let low = lowWatermark ?? capacity - 1
            precondition(low >= 0 && low < capacity, "BoundedChannel lowWatermark must be in 0..<capacity, got \(low)")
            self.lowWatermark = low
            precondition(
                consumerWakeThreshold >= 1 && consumerWakeThreshold <= capacity,
                "BoundedChannel consumerWakeThreshold must be in 1...capacity, got \(consumerWakeThreshold)")
            self.consumerWakeThreshold = consumerWakeThreshold
        }

        // MARK: Sender events

        /// What a sender does after ``send(_:weight:)``.
        @usableFromInline
        enum SendAction {
            /// Return: the element is in the buffer.
            case complete
            /// Resume the waiting consumer with the element, then return.
            case resumeConsumer(Consumer, Element)
            /// The element is in the buffer, which reached the consumer's wake threshold: resume
            /// the waiting consumer to take it (``ConsumerWake/retry``), then return.
            case wakeConsumer(Consumer)
            /// Throw at once with this reason, handing the element back.
            case throwError(SendFailure.Reason)
            /// Suspend: the machine holds the element under `id`; register with
            /// ``senderSuspended(id:sender:)`` and, on cancellation, call
            /// ``senderCancelled(id:)``. A consumer left waiting below its wake threshold is
            /// first resumed (``ConsumerWake/retry``): it must make the room.
            case suspend(id: Int, wakingConsumer: Consumer?)
        }

        /// A sender offers `element` of `weight` bytes.
        @inlinable
        mutating func send(_ element: Element, weight: Int) -> SendAction {
            defer { checkInvariants() }
            switch core.lifecycle {
            case .finished, .failed:
                return .throwError(.finished)
            case .terminated(let afterEnd):
                return .throwError(afterEnd ? .finished : .consumerTerminated)
            case .open:
                break
            }
            if consumerWakeThreshold == 1, let consumer = core.handOver(weight: weight) {
                return .resumeConsumer(consumer, element)
            }
            if waiters.isEmpty && core.queue.admits(weight: weight) {
                core.accept(element, weight: weight)
                if core.queue.count >= consumerWakeThreshold, let consumer = core.takeWaitingConsumer() {
                    return .wakeConsumer(consumer)
                }
                return .complete
            }
            let id = core.drawID()
            waiters.append((id, WeightedQueue.Item(element: element, weight: weight)))
            return .suspend(id: id, wakingConsumer: core.takeWaitingConsumer())
        }

        /// The producers have no more elements for now: a consumer waiting below its wake
        /// threshold takes what is buffered.
        ///
        /// - Returns: the consumer to resume with ``ConsumerWake/retry``, if one waits with
        ///   elements buffered.
        @inlinable
        mutating func flush() -> Consumer? {
            defer { checkInvariants() }
            guard !core.queue.isEmpty else { return nil }
            return core.takeWaitingConsumer()
        }

        /// What a sender does after registering its handle.
        @usableFromInline
        enum SenderSuspendedAction {
            /// Stay suspended; `waitingSenders` registered senders are now waiting.
            case wait(waitingSenders: Int)
            /// The send was resolved before registration: resume the sender at once.
            case resumeSender(Sender, SendResult)
        }

        /// The sender told to suspend as `id` registers its handle.
        @inlinable
        mutating func senderSuspended(id: Int, sender: Sender) -> SenderSuspendedAction {
            defer { checkInvariants() }
            if let result = earlyResults.removeValue(forKey: id) {
                return .resumeSender(sender, result)
            }
            assert(waiters.contains { $0.id == id }, "unknown sender id \(id)")
            senderContinuations[id] = sender
            return .wait(waitingSenders: senderContinuations.count)
        }

        /// What the cancellation handler of a sender does.
        @usableFromInline
        enum SenderCancelledAction {
            /// Nothing: the send was already resolved, or the answer waits for registration.
            case none
            /// Resume these senders: the cancelled one with ``BoundedChannel/SendError/Reason/cancelled``
            /// (if registered), and any later senders that fit now that it left the queue.
            case resumeSenders([SenderResumption])
        }

        /// The task of the sender `id` was cancelled (before or after it registered).
        @inlinable
        mutating func senderCancelled(id: Int) -> SenderCancelledAction {
            defer { checkInvariants() }
            guard let index = waiters.firstIndex(where: { $0.id == id }) else {
                return .none  // already enqueued or failed; the answer stands
            }
            let waiter = waiters.remove(at: index)
            var resumptions: [SenderResumption] = []
            settle(id: waiter.id, .failure(SendFailure(reason: .cancelled, element: waiter.offered.element)), into: &resumptions)
            if index == 0 {
                admitWaiters(into: &resumptions)
            }
            return resumptions.isEmpty ? .none : .resumeSenders(resumptions)
        }

        /// A sender resumed after suspending for `duration`.
        @inlinable
        mutating func senderResumed(afterSuspending duration: Duration) {
            defer { checkInvariants() }
            core.counters.suspensionCount += 1
            core.counters.suspendedDuration += duration
        }

        // MARK: The consumer's side, as the senders see it

        /// Nothing is accepted outside the buffer: a sender's element is accepted when it enters.
        @inlinable
        var backlog: (count: Int, bytes: Int64) { (0, 0) }

        @inlinable
        var isRefilling: Bool { false }

        /// Room was made: once the buffer has drained to the low watermark, admit the waiting
        /// senders that fit.
        @inlinable
        mutating func didDeliver(weight: Int) -> [SenderResumption] {
            guard !waiters.isEmpty, core.queue.occupiedCount <= lowWatermark else { return [] }
            var resumptions: [SenderResumption] = []
            admitWaiters(into: &resumptions)
            return resumptions
        }

        @inlinable
        func refill() -> Never? { nil }

        /// Finished or failed: every waiting sender gets its element back.
        @inlinable
        mutating func didEnd() -> [SenderResumption] {
            releaseWaiters(.finished)
        }

        /// The consumer left: every waiting sender gets its element back.
        @inlinable
        mutating func didTerminate(afterEnd: Bool) -> [SenderResumption] {
            releaseWaiters(.consumerTerminated)
        }

        @inlinable
        func checkProducerInvariants() {
            assert(
                waiters.isEmpty || (core.isOpen && core.queue.occupiedCount > 0),
                "a sender waits although the buffer is empty")
            assert(senderContinuations.count <= waiters.count, "a registered sender is not waiting")
        }

        // MARK: Batches

        /// After `next()` returned an element, the consumer takes up to `maximum` more elements
        /// already buffered, without suspending. They are delivered, but count against the
        /// capacity (and byte budget) until the consumer's next `next()`, which hands them on.
        @inlinable
        mutating func takeAvailable(upTo maximum: Int) -> [Element] {
            defer { checkInvariants() }
            guard case .idle = core.consumer else {
                preconditionFailure("BoundedChannel.takeAvailable(upTo:) called while next() is in progress")
            }
            var taken: [Element] = []
            while taken.count < maximum, let item = core.take() {
                core.queue.hold(weight: item.weight)
                taken.append(item.element)
            }
            return taken
        }

        // MARK: Bookkeeping

        /// Moves waiting senders' elements into the buffer, in order, while the first fits.
        @inlinable
        mutating func admitWaiters(into resumptions: inout [SenderResumption]) {
            var admitted = 0
            while admitted < waiters.count && core.queue.admits(weight: waiters[admitted].offered.weight) {
                core.accept(waiters[admitted].offered.element, weight: waiters[admitted].offered.weight)
                settle(id: waiters[admitted].id, .success(()), into: &resumptions)
                admitted += 1
            }
            waiters.removeFirst(admitted)
        }

        /// Answers the sender `id`: now if it registered, at registration otherwise.
        @inlinable
        mutating func settle(id: Int, _ result: SendResult, into resumptions: inout [SenderResumption]) {
            if let sender = senderContinuations.removeValue(forKey: id) {
                resumptions.append((sender, result))
            } else {
                earlyResults[id] = result
            }
        }

        /// Fails every waiting sender with `reason`, handing its element back.
        @inlinable
        mutating func releaseWaiters(_ reason: SendFailure.Reason) -> [SenderResumption] {
            var resumptions: [SenderResumption] = []
            for waiter in waiters {
                settle(id: waiter.id, .failure(SendFailure(reason: reason, element: waiter.offered.element)), into: &resumptions)
            }
            waiters.removeAll()
            return resumptions
        }
    }
}
