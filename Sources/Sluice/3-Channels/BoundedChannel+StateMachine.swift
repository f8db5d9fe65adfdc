extension BoundedChannel {
    /// The channel's decisions, as a value: each event mutates the state and returns the
    /// action the caller must take once the lock is released.
    ///
    /// The machine never resumes anything itself. It is generic over the handles it stores for
    /// suspended senders and the suspended consumer, so ``BoundedChannel/Storage`` stores
    /// continuations and tests store plain integers.
    ///
    /// Waiters are identified by ids the machine draws when it answers "suspend". The caller
    /// then registers its continuation under that id in a second event; anything that happens
    /// in between (room appears, ``finish()``, cancellation, the consumer leaving) is recorded
    /// under the id and answered at registration. That makes "cancelled before registered"
    /// an ordinary, tested order of events.
    ///
    /// Invariants, checked after every event in debug builds (``checkInvariants()``, O(1)):
    /// - `buffer.count <= capacity`; with a byte budget, `bufferedBytes <= byteBudget` unless
    ///   the buffer holds a single element heavier than the budget.
    /// - Waiting senders exist only while the channel is open and the buffer is non-empty
    ///   (an empty buffer admits any element), so a waiting consumer and waiting senders
    ///   never coexist.
    /// - Every element sent is received, discarded, or in the buffer (counts and bytes).
    ///
    /// - Note: The state types are `@usableFromInline internal` rather than `private` so that
    ///   the event methods can be `@inlinable` (an unspecialised channel hop costs about five
    ///   times a specialised one); nothing outside this file touches them.
    @usableFromInline
    struct StateMachine<Sender, Consumer> {
        @usableFromInline typealias SendFailure = ChannelSendError<Element>
        @usableFromInline typealias SendResult = Result<Void, SendFailure>
        @usableFromInline typealias ConsumerResult = Result<Element?, any Error>

        /// The channel's lifecycle.
        @usableFromInline
        enum State {
            /// Accepting sends.
            case open
            /// ``finish()`` was called: the consumer drains the buffer, then receives nil.
            case finished
            /// ``fail(_:)`` was called: the consumer drains the buffer, then receives the error.
            case failed(any Error)
            /// The consumer went away; later sends fail with the reason held here
            /// (``ChannelSendError/Reason/finished`` if the channel had ended first).
            case terminated(SendFailure.Reason)
        }

        /// Where the single consumer is.
        @usableFromInline
        enum ConsumerState {
            /// Not inside `next()`, or inside it without waiting.
            case idle
            /// `next()` found nothing and drew `id`; its continuation is not registered yet.
            case pending(id: Int)
            /// Suspended in `next()` on `consumer`.
            case waiting(id: Int, consumer: Consumer)
        }

        /// An element in the buffer with its weight (bytes).
        @usableFromInline
        struct Buffered {
            @usableFromInline var element: Element
            @usableFromInline var weight: Int

            @inlinable
            init(element: Element, weight: Int) {
                self.element = element
                self.weight = weight
            }
        }

        /// A sender waiting for room, in arrival order; its continuation may not be
        /// registered yet.
        @usableFromInline
        struct Waiter {
            @usableFromInline var id: Int
            @usableFromInline var element: Element
            @usableFromInline var weight: Int

            @inlinable
            init(id: Int, element: Element, weight: Int) {
                self.id = id
                self.element = element
                self.weight = weight
            }
        }

        /// A suspended sender to resume, and with what.
        @usableFromInline
        struct SenderResumption {
            /// The sender's handle.
            @usableFromInline var sender: Sender
            /// `.success` if its element was enqueued; the error with the element otherwise.
            @usableFromInline var result: SendResult

            @inlinable
            init(sender: Sender, result: SendResult) {
                self.sender = sender
                self.result = result
            }
        }

        /// Capacity in elements (>= 1).
        @usableFromInline let capacity: Int
        /// Optional bound on the bytes (sum of weights) in the buffer.
        @usableFromInline let byteBudget: Int?

        @usableFromInline var state: State = .open
        @usableFromInline var consumer: ConsumerState = .idle
        @usableFromInline var hasIterator = false
        @usableFromInline var buffer = FIFOBuffer<Buffered>()
        @usableFromInline var bufferedBytes = 0
        /// Senders waiting for room, first come first served.
        @usableFromInline var waiters: [Waiter] = []
        /// Continuations of waiting senders that have registered.
        @usableFromInline var senderContinuations: [Int: Sender] = [:]
        /// Answers for senders resolved before they registered their continuation.
        @usableFromInline var earlyResults: [Int: SendResult] = [:]
        @usableFromInline var nextID = 0
        @usableFromInline var counters = ChannelStatistics()

        /// Creates an open, empty machine.
        ///
        /// - Parameters:
        ///   - capacity: the most elements the buffer holds; must be >= 1.
        ///   - byteBudget: the most bytes (sum of weights) the buffer holds, if bounded;
        ///     must be >= 0.
        @inlinable
        init(capacity: Int, byteBudget: Int?) {
            precondition(capacity >= 1, "BoundedChannel capacity must be at least 1, got \(capacity)")
            precondition((byteBudget ?? 0) >= 0, "BoundedChannel byteBudget must not be negative")
            self.capacity = capacity
            self.byteBudget = byteBudget
        }

        // MARK: Events

        /// What the caller of ``makeAsyncIterator()`` does.
        @usableFromInline
        enum MakeIteratorAction: Equatable {
            /// Create the iterator.
            case makeIterator
            /// Stop the program: a second consumer is a programming error.
            case failSecondIterator
        }

        /// The consumer asks for its iterator.
        @inlinable
        mutating func makeIterator() -> MakeIteratorAction {
            defer { checkInvariants() }
            if hasIterator { return .failSecondIterator }
            hasIterator = true
            return .makeIterator
        }

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
            switch state {
            case .finished, .failed:
                return .throwError(.finished)
            case .terminated(let reason):
                return .throwError(reason)
            case .open:
                break
            }
            if case .waiting(_, let waitingConsumer) = consumer {
                assert(buffer.isEmpty && waiters.isEmpty)
                consumer = .idle
                countSent(weight: weight)
                countReceived(weight: weight)
                // Handed over directly: it passed through the buffer, alone, for an instant.
                notePeak(count: 1, bytes: weight)
                return .resumeConsumer(waitingConsumer, element)
            }
            if waiters.isEmpty && hasRoom(forWeight: weight) {
                enqueue(element, weight: weight)
                return .complete
            }
            let id = drawID()
            waiters.append(Waiter(id: id, element: element, weight: weight))
            return .suspend(id: id)
        }

        /// What a sender does after registering its continuation.
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
            settle(id: waiter.id, .failure(SendFailure(reason: .cancelled, element: waiter.element)), into: &resumptions)
            if index == 0 {
                admitWaiters(into: &resumptions)
            }
            return resumptions.isEmpty ? .none : .resumeSenders(resumptions)
        }

        /// What the consumer does after ``next()``.
        @usableFromInline
        enum NextAction {
            /// Return the element, after resuming the senders whose elements now fit.
            case returnElement(Element, resumingSenders: [Sender])
            /// Return nil: finished and drained.
            case returnNil
            /// Throw the error given to ``fail(_:)``: failed and drained.
            case throwError(any Error)
            /// Throw `CancellationError`: the consumer has gone away.
            case throwCancellation
            /// Suspend as `id`: register with ``consumerSuspended(id:consumer:)`` and, on
            /// cancellation, call ``consumerCancelled(id:)``.
            case suspend(id: Int)
        }

        /// The consumer asks for the next element.
        @inlinable
        mutating func next() -> NextAction {
            defer { checkInvariants() }
            guard case .idle = consumer else {
                preconditionFailure("BoundedChannel.next() called while another next() is in progress")
            }
            if let item = buffer.popFirst() {
                return .returnElement(item.element, resumingSenders: take(item))
            }
            switch state {
            case .open:
                let id = drawID()
                consumer = .pending(id: id)
                return .suspend(id: id)
            case .finished:
                return .returnNil
            case .failed(let error):
                return .throwError(error)
            case .terminated:
                return .throwCancellation
            }
        }

        /// What the consumer does after registering its continuation.
        @usableFromInline
        enum ConsumerSuspendedAction {
            /// Stay suspended until an element, the end, or cancellation.
            case wait
            /// Resume the consumer at once with the result, after resuming these senders.
            case resumeConsumer(Consumer, ConsumerResult, resumingSenders: [Sender])
        }

        /// The consumer told to suspend as `id` registers its handle.
        @inlinable
        mutating func consumerSuspended(id: Int, consumer handle: Consumer) -> ConsumerSuspendedAction {
            defer { checkInvariants() }
            guard case .pending(let pendingID) = consumer, pendingID == id else {
                // Cancelled before it registered: consumerCancelled(id:) terminated the channel.
                return .resumeConsumer(handle, .failure(CancellationError()), resumingSenders: [])
            }
            consumer = .idle
            if let item = buffer.popFirst() {
                return .resumeConsumer(handle, .success(item.element), resumingSenders: take(item))
            }
            switch state {
            case .open:
                consumer = .waiting(id: id, consumer: handle)
                return .wait
            case .finished:
                return .resumeConsumer(handle, .success(nil), resumingSenders: [])
            case .failed(let error):
                return .resumeConsumer(handle, .failure(error), resumingSenders: [])
            case .terminated:
                return .resumeConsumer(handle, .failure(CancellationError()), resumingSenders: [])
            }
        }

        /// What ends the channel for the consumer's side: its cancellation or its departure.
        @usableFromInline
        enum TerminateAction {
            /// Nothing to resume.
            case none
            /// Resume the consumer (if it was waiting) with `CancellationError`, and every
            /// suspended sender with ``ChannelSendError/Reason/consumerTerminated``.
            case resume(consumer: Consumer?, senders: [SenderResumption])
        }

        /// The task of the consumer suspended (or about to suspend) as `id` was cancelled.
        ///
        /// If that `next()` was already answered, nothing happens here: the consumer's next
        /// call to `next()` sees the cancelled task.
        @inlinable
        mutating func consumerCancelled(id: Int) -> TerminateAction {
            defer { checkInvariants() }
            switch consumer {
            case .pending(let pendingID) where pendingID == id:
                consumer = .idle
                return terminate(consumer: nil)
            case .waiting(let waitingID, let handle) where waitingID == id:
                consumer = .idle
                return terminate(consumer: handle)
            default:
                return .none
            }
        }

        /// The consumer went away outside `next()`: its iterator was dropped, or it called
        /// `next()` in a cancelled task. Idempotent.
        @inlinable
        mutating func consumerTerminated() -> TerminateAction {
            defer { checkInvariants() }
            assert({ if case .idle = consumer { true } else { false } }())
            return terminate(consumer: nil)
        }

        /// What ``finish()`` and ``fail(_:)`` do.
        @usableFromInline
        enum FinishAction {
            /// Nothing: the channel had already ended.
            case none
            /// Resume the waiting consumer (if any) with its result, and every suspended
            /// sender with ``ChannelSendError/Reason/finished`` and its element.
            case resume(consumer: (Consumer, ConsumerResult)?, senders: [SenderResumption])
        }

        /// The producer side ends the channel: the consumer receives nil after the buffer.
        @inlinable
        mutating func finish() -> FinishAction {
            defer { checkInvariants() }
            return end(.finished, result: .success(nil))
        }

        /// The producer side fails the channel: the consumer receives `error` after the buffer.
        @inlinable
        mutating func fail(_ error: any Error) -> FinishAction {
            defer { checkInvariants() }
            return end(.failed(error), result: .failure(error))
        }

        /// A sender resumed after suspending for `duration`.
        @inlinable
        mutating func senderResumed(afterSuspending duration: Duration) {
            defer { checkInvariants() }
            counters.suspensionCount += 1
            counters.suspendedDuration += duration
        }

        /// The counters now.
        @inlinable
        var statistics: ChannelStatistics {
            var statistics = counters
            statistics.bufferedCount = buffer.count
            statistics.bufferedBytes = Int64(bufferedBytes)
            return statistics
        }
    }
}
