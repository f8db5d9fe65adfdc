/// A channel's decisions, as a value: a ``ChannelCore`` plus a producer side. The consumer's
/// events (``next()``, ``consumerSuspended(id:consumer:)``, ``consumerCancelled(id:)``,
/// ``consumerTerminated()``) and the end the producers give (``end(_:)``, with ``finish()`` and
/// ``fail(_:)``) are implemented once, here, for ``BoundedChannel`` and ``PushBuffer`` alike;
/// each conforming machine adds its producer events and answers the requirements below, which
/// say how its producers react.
///
/// Every event mutates the state and returns the action the caller takes once the lock is
/// released; the machine never resumes, calls or writes anything itself. Each event ends by
/// checking the invariants in debug builds (``checkInvariants()``, O(1)):
/// - the buffer within its capacity and byte budget (an element heavier than the budget only
///   alone);
/// - a waiting consumer only while the stream is open with nothing to take (no buffered element,
///   no backlog, no refill in flight);
/// - every accepted element delivered, discarded, buffered or in the backlog (counts and bytes).
@usableFromInline
protocol ChannelMachine {
    /// What the channel carries.
    associatedtype Element
    /// The handle of the suspended consumer: a continuation in the storage, an integer in tests.
    associatedtype Consumer
    /// What the storage does for the producers after an event, outside the lock.
    associatedtype Effect
    /// A request to fetch accepted elements kept outside the memory buffer, outside the lock.
    associatedtype Refill

    /// The channel type's name, for the messages of failed preconditions.
    static var owner: StaticString { get }
    /// The effect that does nothing.
    static var noEffect: Effect { get }

    /// The shared state.
    var core: ChannelCore<Element, Consumer> { get set }
    /// Accepted elements kept outside the memory buffer and not yet delivered (a spill store's
    /// records), with their bytes.
    var backlog: (count: Int, bytes: Int64) { get }
    /// Whether the consumer is fetching part of the backlog (between ``refill()`` and the report
    /// of its outcome).
    var isRefilling: Bool { get }
    /// A consumer waiting on an empty buffer is woken once this many elements are buffered (or
    /// earlier, when the producers flush, end the stream or must wait themselves); 1: at once.
    var consumerWakeThreshold: Int { get }

    /// An element of `weight` bytes just left the buffer for the consumer.
    mutating func didDeliver(weight: Int) -> Effect
    /// The buffer is empty: a request to fetch part of the backlog, or nil when there is none.
    mutating func refill() -> Refill?
    /// The producers ended the stream (finished or failed it).
    mutating func didEnd() -> Effect
    /// The consumer went away (the buffer is already dropped); `afterEnd`: the producers had
    /// ended the stream first.
    mutating func didTerminate(afterEnd: Bool) -> Effect
    /// Stops the program if the producer side's invariants do not hold (debug builds only).
    func checkProducerInvariants()
}

extension ChannelMachine {
    @usableFromInline typealias MakeIteratorAction = ChannelAction.MakeIterator
    @usableFromInline typealias NextAction = ChannelAction.Next<Element, Effect, Refill>
    @usableFromInline typealias ConsumerSuspendedAction = ChannelAction.ConsumerSuspended<Consumer, Element>
    @usableFromInline typealias EndAction = ChannelAction.End<Consumer, Element, Effect>
    @usableFromInline typealias Ending = ChannelCore<Element, Consumer>.Ending

    /// The consumer asks for its iterator.
    @inlinable
    mutating func makeIterator() -> MakeIteratorAction {
        defer { checkInvariants() }
        if core.hasIterator { return .failSecondIterator }
        core.hasIterator = true
        return .makeIterator
    }

    /// The consumer asks for the next element.
    @inlinable
    mutating func next() -> NextAction {
        defer { checkInvariants() }
        guard case .idle = core.consumer, !isRefilling else {
            preconditionFailure("\(Self.owner).next() called while another next() is in progress")
        }
        if let item = core.take() {
            return .returnElement(item.element, didDeliver(weight: item.weight))
        }
        if let request = refill() {
            return .refill(request)
        }
        switch core.lifecycle {
        case .open:
            let id = core.drawID()
            core.consumer = .pending(id: id)
            return .suspend(id: id)
        case .finished:
            return .returnNil
        case .failed(let error):
            return .throwError(error)
        case .terminated:
            return .throwCancellation
        }
    }

    /// The consumer asks for more: the elements it took in a batch (see
    /// ``BoundedChannel/takeAvailable(upTo:)``) are handed on and stop counting against the
    /// capacity. Runs at the start of every `next()`, under the same lock.
    ///
    /// - Returns: the producers' effect of the room made, or nil when nothing was held.
    @inlinable
    mutating func releaseHeld() -> Effect? {
        guard core.queue.releaseHeld() else { return nil }
        return didDeliver(weight: 0)
    }

    /// The consumer told to suspend as `id` registers its handle.
    ///
    /// If anything arrived since ``next()`` decided to suspend (an element, the end), the
    /// consumer is resumed at once with ``ConsumerWake/retry`` and asks again.
    @inlinable
    mutating func consumerSuspended(id: Int, consumer handle: Consumer) -> ConsumerSuspendedAction {
        defer { checkInvariants() }
        guard case .pending(let pendingID) = core.consumer, pendingID == id else {
            // Answered before it registered: its cancellation terminated the stream.
            if core.isTerminated { return .resumeConsumer(handle, .failure(CancellationError())) }
            return .resumeConsumer(handle, .retry)
        }
        if core.isOpen && core.queue.isEmpty && backlog.count == 0 {
            core.consumer = .waiting(id: id, consumer: handle)
            return .wait
        }
        core.consumer = .idle
        return .resumeConsumer(handle, .retry)
    }

    /// The task of the consumer suspended (or about to suspend) as `id` was cancelled.
    ///
    /// If that `next()` was already answered, nothing happens here: the consumer's next call to
    /// `next()` sees the cancelled task.
    @inlinable
    mutating func consumerCancelled(id: Int) -> EndAction {
        defer { checkInvariants() }
        switch core.consumer {
        case .pending(let pendingID) where pendingID == id:
            core.consumer = .idle
            return terminate(consumer: nil)
        case .waiting(let waitingID, let handle) where waitingID == id:
            core.consumer = .idle
            return terminate(consumer: handle)
        default:
            return .none
        }
    }

    /// The consumer went away outside `next()`: its iterator was dropped, or it called `next()`
    /// in a cancelled task. Idempotent.
    @inlinable
    mutating func consumerTerminated() -> EndAction {
        defer { checkInvariants() }
        assert({ if case .idle = core.consumer { true } else { false } }())
        return terminate(consumer: nil)
    }

    /// The producers end the stream: the consumer receives nil (``Ending/finished``) or the error
    /// (``Ending/failed(_:)``) after the buffered elements. Only the first ending counts.
    @inlinable
    mutating func end(_ ending: Ending) -> EndAction {
        defer { checkInvariants() }
        switch core.end(ending) {
        case .alreadyEnded:
            return .none
        case .ended(let waitingConsumer):
            // A consumer left waiting with elements buffered (below its wake threshold) takes
            // them first, and the end after them.
            let wake: ConsumerWake<Element> = switch ending {
            case _ where !core.queue.isEmpty: .retry
            case .finished: .end
            case .failed(let error): .failure(error)
            }
            return .resume(consumer: waitingConsumer.map { ($0, wake) }, didEnd())
        }
    }

    /// ``end(_:)`` with ``Ending/finished``.
    @inlinable
    mutating func finish() -> EndAction {
        end(.finished)
    }

    /// ``end(_:)`` with ``Ending/failed(_:)``.
    @inlinable
    mutating func fail(_ error: any Error) -> EndAction {
        end(.failed(error))
    }

    /// The counters now.
    @inlinable
    var statistics: ChannelStatistics {
        core.statistics(backlog: backlog)
    }

    @inlinable
    mutating func terminate(consumer handle: Consumer?) -> EndAction {
        let wake = handle.map { ($0, ConsumerWake<Element>.failure(CancellationError())) }
        guard let afterEnd = core.terminate() else {
            return wake.map { .resume(consumer: $0, Self.noEffect) } ?? .none
        }
        return .resume(consumer: wake, didTerminate(afterEnd: afterEnd))
    }

    /// Stops the program if an invariant does not hold (debug builds only; O(1)).
    @inlinable
    func checkInvariants() {
        core.queue.checkInvariants(owner: Self.owner)
        let counters = core.counters
        let backlog = self.backlog
        assert(
            counters.elementsAccepted
                == counters.elementsDelivered + counters.elementsDiscarded + core.queue.count + backlog.count
                && counters.bytesAccepted
                == counters.bytesDelivered + counters.bytesDiscarded + Int64(core.queue.bytes) + backlog.bytes,
            "an accepted element is neither delivered, discarded, buffered nor in the backlog")
        switch core.consumer {
        case .idle:
            break
        case .pending:
            assert(!isRefilling, "a refill while the consumer suspends")
        case .waiting:
            assert(
                core.isOpen && core.queue.count < consumerWakeThreshold && backlog.count == 0 && !isRefilling,
                "the consumer waits while there is something to take")
        }
        checkProducerInvariants()
    }
}
