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
    /// channel is open and the buffer is non-empty (an empty buffer admits any element), so a
    /// waiting consumer and waiting senders never coexist; a registered sender is a waiting one.
    @usableFromInline
    struct StateMachine<Sender, Consumer>: ChannelMachine {
        @usableFromInline typealias SendFailure = ChannelSendError<Element>
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

        /// Creates an open, empty machine.
        ///
        /// - Parameters:
        ///   - capacity: the most elements the buffer holds; must be >= 1.
        ///   - byteBudget: the most bytes (sum of weights) the buffer holds, if bounded;
        ///     must be >= 0.
        @inlinable
        init(capacity: Int, byteBudget: Int?) {
            core = ChannelCore(capacity: capacity, byteBudget: byteBudget, owner: Self.owner)
        }

        // MARK: Sender events

        /// What a sender does after ``send(_:weight:)``.
        @usableFromInline
        enum SendAction {
            /// Return: the element is in the buffer.
            case complete
            /// Resume the waiting consumer with the element, then return.
            case resumeConsumer(Consumer, Element)
            /// Throw at once with this reason, handing the element back.
            case throwError(SendFailure.Reason)
            /// Suspend: the machine holds the element under `id`; register with
            /// ``senderSuspended(id:sender:)`` and, on cancellation, call
            /// ``senderCancelled(id:)``.
            case suspend(id: Int)
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
            if let consumer = core.handOver(weight: weight) {
                return .resumeConsumer(consumer, element)
            }
            if waiters.isEmpty && core.queue.admits(weight: weight) {
                core.accept(element, weight: weight)
                return .complete
            }
            let id = core.drawID()
            waiters.append((id, WeightedQueue.Item(element: element, weight: weight)))
            return .suspend(id: id)
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
            /// Resume these senders: the cancelled one with ``ChannelSendError/Reason/cancelled``
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

        /// Room was made: admit the waiting senders that now fit.
        @inlinable
        mutating func didDeliver(weight: Int) -> [SenderResumption] {
            guard !waiters.isEmpty else { return [] }
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
            assert(waiters.isEmpty || (core.isOpen && !core.queue.isEmpty), "a sender waits although its element would fit")
            assert(senderContinuations.count <= waiters.count, "a registered sender is not waiting")
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
