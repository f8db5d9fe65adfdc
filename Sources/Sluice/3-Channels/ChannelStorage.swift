/// The class behind a ``BoundedChannel`` or a ``PushBuffer``: it owns the lock around the
/// ``ChannelMachine`` and performs every side effect the machine decides.
///
/// The consumer's side (the iterator, `next()` with its suspension and cancellation, the end of
/// the consumer) is implemented once, in this protocol's extension; a conforming storage adds its
/// producers' side and carries out its machine's effects. Each operation decides inside
/// `machine.withLock` and acts after it returns: no continuation is resumed, and no callback or
/// hook runs, while the lock is held.
///
/// - Note: The lock is a ``LockedValue`` (a `pthread_mutex_t`), not `Synchronization.Mutex`: on
///   Linux with Swift 6.3 `Mutex` waits on a futex that ThreadSanitizer does not see, so
///   `swift test --sanitize=thread` reported every contended critical section here as a race.
@usableFromInline
protocol ChannelStorage: AnyObject, Sendable {
    /// The channel's decisions; its consumer handle is the consumer's continuation.
    associatedtype Machine: ChannelMachine
    where
        Machine.Consumer == CheckedContinuation<ConsumerWake<Machine.Element>, Never>,
        Machine.Element: Sendable, Machine.Effect: Sendable, Machine.Refill: Sendable

    /// The machine, behind its lock.
    var machine: LockedValue<Machine> { get }

    /// Carries out what the machine decided for the producers (resume senders, resume or stop a
    /// source). Runs outside the lock.
    func act(_ effect: Machine.Effect)

    /// Fetches part of the backlog outside the lock (the consumer's task waits), reports the
    /// outcome to the machine and returns its next answer.
    func refill(_ request: Machine.Refill) async -> Machine.NextAction

    /// The consumer is now suspended in `next()`, its continuation registered.
    func consumerDidSuspend()

    /// The consumer received the end of the stream (nil, an error, or `CancellationError`).
    func consumerReachedEnd()

    /// The consumer went away: its iterator is gone, or it called `next()` in a cancelled task.
    func consumerDidLeave()
}

extension ChannelStorage {
    @usableFromInline typealias ConsumerContinuation = CheckedContinuation<ConsumerWake<Machine.Element>, Never>

    /// Makes the single consumer's hold on the channel: it calls ``next()``, and
    /// ``consumerTerminated()`` when it is gone. Made here, where `Self` is known, so that the
    /// consumer's calls run specialised code.
    ///
    /// - Precondition: Called once per channel: a second consumer stops the program.
    @inlinable
    func makeConsumer() -> ConsumerLifetime<Machine.Element> {
        switch machine.withLock({ $0.makeIterator() }) {
        case .makeIterator:
            return ConsumerLifetime(next: { try await self.next() }, leave: { self.consumerTerminated() })
        case .failSecondIterator:
            preconditionFailure("\(Machine.owner) supports a single consumer: makeAsyncIterator() called twice")
        }
    }

    /// The consumer's `next()`: the next element, nil at the end, or the stream's error;
    /// `CancellationError` when the consumer's task is cancelled before or during the call.
    @inlinable
    func next() async throws -> Machine.Element? {
        if Task.isCancelled {
            consumerTerminated()
            throw CancellationError()
        }
        let (released, first) = machine.withLock { machine in (machine.releaseHeld(), machine.next()) }
        if let released { act(released) }
        var action = first
        while true {
            switch action {
            case .returnElement(let element, let effect):
                act(effect)
                return element
            case .refill(let request):
                action = await refill(request)
            case .returnNil:
                consumerReachedEnd()
                return nil
            case .throwError(let error):
                consumerReachedEnd()
                throw error
            case .throwCancellation:
                consumerReachedEnd()
                throw CancellationError()
            case .suspend(let id):
                switch await suspendConsumer(id: id) {
                case .element(let element):
                    return element
                case .end:
                    consumerReachedEnd()
                    return nil
                case .failure(let error):
                    consumerReachedEnd()
                    throw error
                case .retry:
                    action = machine.withLock { $0.next() }
                }
            }
        }
    }

    /// Suspends the consumer as `id` until an element, the end, or the cancellation of its task.
    @inlinable
    func suspendConsumer(id: Int) async -> ConsumerWake<Machine.Element> {
        let wake = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: ConsumerContinuation) in
                switch machine.withLock({ $0.consumerSuspended(id: id, consumer: continuation) }) {
                case .wait:
                    consumerDidSuspend()
                case .resumeConsumer(let consumer, let wake):
                    consumer.resume(returning: wake)
                }
            }
        } onCancel: {
            act(machine.withLock { $0.consumerCancelled(id: id) })
        }
        // Every wake was decided under the machine's lock and resumed after its release. Taking
        // the lock once more orders what the producer did before (the element's bytes) before
        // what the consumer does next, as ThreadSanitizer sees it: a continuation resumed before
        // its task reached the await hands over through an atomic of the Swift runtime that
        // ThreadSanitizer does not see (swiftlang/swift#57803), and it reported the element's
        // bytes as a race. One uncontended lock per wake-up, beside the thread wake-up itself.
        machine.withLock { _ in }
        return wake
    }

    /// The consumer's iterator is gone, or its task was cancelled: release the producers.
    @inlinable
    func consumerTerminated() {
        act(machine.withLock { $0.consumerTerminated() })
        consumerDidLeave()
    }

    @inlinable
    func act(_ action: Machine.EndAction) {
        switch action {
        case .none:
            break
        case .resume(let consumer, let effect):
            act(effect)
            if let (consumer, wake) = consumer {
                consumer.resume(returning: wake)
            }
        }
    }

    /// The counters now; takes the lock briefly.
    @inlinable
    var statistics: ChannelStatistics {
        machine.withLock { $0.statistics }
    }

    // Defaults for a storage with nothing to do at these points.

    @inlinable
    func consumerDidSuspend() {}

    @inlinable
    func consumerReachedEnd() {}

    @inlinable
    func consumerDidLeave() {}
}
