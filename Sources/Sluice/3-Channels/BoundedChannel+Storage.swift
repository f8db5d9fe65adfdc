import Synchronization

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

    /// Owns the lock around the ``StateMachine`` and performs every side effect it decides.
    ///
    /// Each operation decides inside `machine.withLock` and acts after it returns: no
    /// continuation is resumed, and no hook is called, while the lock is held.
    ///
    /// - Note: The lock is a ``LockedValue`` (a `pthread_mutex_t`), not `Synchronization.Mutex`:
    ///   on Linux with Swift 6.3 `Mutex` waits on a futex that ThreadSanitizer does not see, so
    ///   `swift test --sanitize=thread` reported every contended critical section here as a race.
    @usableFromInline
    final class Storage: Sendable {
        @usableFromInline typealias SenderContinuation = CheckedContinuation<Result<Void, ChannelSendError<Element>>, Never>
        @usableFromInline typealias ConsumerContinuation = CheckedContinuation<Result<Element?, any Error>, Never>
        @usableFromInline typealias Machine = StateMachine<SenderContinuation, ConsumerContinuation>

        @usableFromInline let machine: LockedValue<Machine>
        @usableFromInline let weight: @Sendable (Element) -> Int
        @usableFromInline let hooks: Hooks

        @inlinable
        init(capacity: Int, byteBudget: Int?, weight: @escaping @Sendable (Element) -> Int, hooks: Hooks) {
            self.machine = LockedValue(Machine(capacity: capacity, byteBudget: byteBudget))
            self.weight = weight
            self.hooks = hooks
        }

        // MARK: Sender side

        @inlinable
        func send(_ element: Element) async throws(ChannelSendError<Element>) {
            let weight = self.weight(element)
            precondition(weight >= 0, "BoundedChannel weight must not be negative, got \(weight)")
            switch machine.withLock({ $0.send(element, weight: weight) }) {
            case .complete:
                return
            case .resumeConsumer(let consumer, let element):
                consumer.resume(returning: .success(element))
            case .throwError(let reason):
                throw ChannelSendError(reason: reason, element: element)
            case .suspend(let id):
                try await suspendSender(id: id).get()
            }
        }

        /// Suspends the sender `id`, whose element the machine holds, until it is enqueued or
        /// handed back; measures the suspension.
        @inlinable
        func suspendSender(id: Int) async -> Result<Void, ChannelSendError<Element>> {
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
                    resume(resumptions)
                }
            }
            let duration = start.duration(to: .now)
            machine.withLock { $0.senderResumed(afterSuspending: duration) }
            return result
        }

        @inlinable
        func finish() {
            act(machine.withLock { $0.finish() })
        }

        @inlinable
        func fail(_ error: any Error) {
            act(machine.withLock { $0.fail(error) })
        }

        // MARK: Consumer side

        @inlinable
        func makeIterator() {
            switch machine.withLock({ $0.makeIterator() }) {
            case .makeIterator:
                return
            case .failSecondIterator:
                preconditionFailure("BoundedChannel supports a single consumer: makeAsyncIterator() called twice")
            }
        }

        @inlinable
        func next() async throws -> Element? {
            if Task.isCancelled {
                act(machine.withLock { $0.consumerTerminated() })
                throw CancellationError()
            }
            switch machine.withLock({ $0.next() }) {
            case .returnElement(let element, let senders):
                resumeAdmitted(senders)
                return element
            case .returnNil:
                return nil
            case .throwError(let error):
                throw error
            case .throwCancellation:
                throw CancellationError()
            case .suspend(let id):
                return try await suspendConsumer(id: id).get()
            }
        }

        @inlinable
        func suspendConsumer(id: Int) async -> Result<Element?, any Error> {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: ConsumerContinuation) in
                    switch machine.withLock({ $0.consumerSuspended(id: id, consumer: continuation) }) {
                    case .wait:
                        hooks.consumerSuspended?()
                    case .resumeConsumer(let consumer, let result, let senders):
                        resumeAdmitted(senders)
                        consumer.resume(returning: result)
                    }
                }
            } onCancel: {
                act(machine.withLock { $0.consumerCancelled(id: id) })
            }
        }

        /// The consumer's iterator is gone: release everyone.
        @inlinable
        func consumerTerminated() {
            act(machine.withLock { $0.consumerTerminated() })
        }

        @inlinable
        var statistics: ChannelStatistics {
            machine.withLock { $0.statistics }
        }

        // MARK: Acting on decisions (never under the lock)

        @inlinable
        func act(_ action: Machine.FinishAction) {
            switch action {
            case .none:
                break
            case .resume(let consumer, let senders):
                resume(senders)
                if let (consumer, result) = consumer {
                    consumer.resume(returning: result)
                }
            }
        }

        @inlinable
        func act(_ action: Machine.TerminateAction) {
            switch action {
            case .none:
                break
            case .resume(let consumer, let senders):
                resume(senders)
                consumer?.resume(returning: .failure(CancellationError()))
            }
        }

        @inlinable
        func resume(_ resumptions: [Machine.SenderResumption]) {
            for resumption in resumptions {
                resumption.sender.resume(returning: resumption.result)
            }
        }

        @inlinable
        func resumeAdmitted(_ senders: [SenderContinuation]) {
            for sender in senders {
                sender.resume(returning: .success(()))
            }
        }
    }

    /// Terminates the channel when the consumer's iterator (and every copy of it) is gone.
    @usableFromInline
    final class ConsumerLifetime: Sendable {
        @usableFromInline let storage: Storage

        @inlinable
        init(storage: Storage) {
            self.storage = storage
        }

        deinit {
            storage.consumerTerminated()
        }
    }
}
