extension BoundedChannel {
    /// Internal observation points for tests, so they can order events without sleeping.
    ///
    /// Each hook runs on the task that suspends, after the channel's lock is released and
    /// after that task's continuation is registered: once it has run, a `next()` (or a
    /// cancellation) reaches the suspended task.
    @usableFromInline
    struct Hooks: Sendable {
        /// A sender registered its continuation; the argument is how many registered senders
        /// were waiting at that moment (including this one).
        @usableFromInline var senderSuspended: (@Sendable (_ waitingSenders: Int) -> Void)?
        /// The consumer registered its continuation in `next()`.
        @usableFromInline var consumerSuspended: (@Sendable () -> Void)?

        @inlinable
        init(
            senderSuspended: (@Sendable (_ waitingSenders: Int) -> Void)? = nil,
            consumerSuspended: (@Sendable () -> Void)? = nil
        ) {
            self.senderSuspended = senderSuspended
            self.consumerSuspended = consumerSuspended
        }
    }

    /// Owns the lock around the ``StateMachine`` and performs every side effect it decides: the
    /// consumer's side comes from ``ChannelStorage``, the senders' side is here.
    @usableFromInline
    final class Storage: ChannelStorage {
        @usableFromInline typealias SenderContinuation = CheckedContinuation<Result<Void, BoundedChannel<Element>.SendError>, Never>
        @usableFromInline typealias Machine = StateMachine<SenderContinuation, CheckedContinuation<ConsumerWake<Element>, Never>>

        @usableFromInline let machine: LockedValue<Machine>
        @usableFromInline let weight: @Sendable (Element) -> Int
        @usableFromInline let hooks: Hooks

        @inlinable
        init(
            capacity: Int, byteBudget: Int?, lowWatermark: Int?, consumerWakeThreshold: Int,
            weight: @escaping @Sendable (Element) -> Int, hooks: Hooks
        ) {
            self.machine = LockedValue(Machine(
                capacity: capacity, byteBudget: byteBudget, lowWatermark: lowWatermark,
                consumerWakeThreshold: consumerWakeThreshold))
            self.weight = weight
            self.hooks = hooks
        }

        // MARK: Sender side

        @inlinable
        func send(_ element: Element) async throws(BoundedChannel<Element>.SendError) {
            let weight = self.weight(element)
            precondition(weight >= 0, "BoundedChannel weight must not be negative, got \(weight)")
            switch machine.withLock({ $0.send(element, weight: weight) }) {
            case .complete:
                return
            case .resumeConsumer(let consumer, let element):
                consumer.resume(returning: .element(element))
            case .wakeConsumer(let consumer):
                consumer.resume(returning: .retry)
            case .throwError(let reason):
                throw SendError(reason: reason, element: element)
            case .suspend(let id, let consumer):
                consumer?.resume(returning: .retry)
                try await suspendSender(id: id).get()
            }
        }

        /// Suspends the sender `id`, whose element the machine holds, until it is enqueued or
        /// handed back; measures the suspension.
        @inlinable
        func suspendSender(id: Int) async -> Result<Void, BoundedChannel<Element>.SendError> {
            let start = ContinuousClock.now
            let result = await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: SenderContinuation) in
                    switch machine.withLock({ $0.senderSuspended(id: id, sender: continuation) }) {
                    case .wait(let waitingSenders):
                        hooks.senderSuspended?(waitingSenders)
                    case .resumeSender(let sender, let result):
                        sender.resume(returning: result)
                    }
                }
            } onCancel: {
                switch machine.withLock({ $0.senderCancelled(id: id) }) {
                case .none:
                    break
                case .resumeSenders(let resumptions):
                    act(resumptions)
                }
            }
            let duration = start.duration(to: .now)
            machine.withLock { $0.senderResumed(afterSuspending: duration) }
            return result
        }

        @inlinable
        func flush() {
            machine.withLock { $0.flush() }?.resume(returning: .retry)
        }

        @inlinable
        func takeAvailable(upTo maximum: Int) -> [Element] {
            machine.withLock { $0.takeAvailable(upTo: maximum) }
        }

        @inlinable
        func finish() {
            act(machine.withLock { $0.finish() })
        }

        @inlinable
        func fail(_ error: any Error) {
            act(machine.withLock { $0.fail(error) })
        }

        // MARK: What the consumer's side asks of the senders' side

        /// Resumes senders: admitted ones with success, the others with their element.
        @inlinable
        func act(_ resumptions: [Machine.SenderResumption]) {
            for resumption in resumptions {
                resumption.sender.resume(returning: resumption.result)
            }
        }

        @inlinable
        func refill(_ request: Never) async -> Machine.NextAction {}

        @inlinable
        func consumerDidSuspend() {
            hooks.consumerSuspended?()
        }
    }
}
