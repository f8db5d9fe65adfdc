extension PushBuffer {
    /// What a suspended consumer is woken with.
    @usableFromInline
    enum ConsumerWake: Sendable {
        /// The next element, handed over directly.
        case element(Element)
        /// The end of the stream.
        case end
        /// The stream's error (or `CancellationError`).
        case failure(any Error)
        /// Something changed (a spilled record arrived): ask the machine again.
        case retry
    }

    /// The push buffer's decisions, as a value: each event mutates the state and returns the
    /// action the caller takes once the lock is released.
    ///
    /// The machine never resumes, calls or writes anything itself. It is generic over the handle
    /// it keeps for the suspended consumer, so ``PushBuffer/Storage`` stores a continuation and
    /// tests store plain integers.
    ///
    /// The buffered elements form one queue: the elements in memory come first, then the records
    /// of the spill file. While the spill file holds records (or a read of them is in flight, or
    /// a write is reserved), every new element goes to the spill file too, so nothing overtakes;
    /// the consumer reads spilled records back into the (then empty) memory buffer.
    ///
    /// Invariants, checked after every event in debug builds (``checkInvariants()``, O(1)):
    /// - `buffer.count <= capacity`; with a byte budget, `bufferedBytes <= byteBudget` unless the
    ///   buffer holds a single element heavier than the budget (also after a read-back).
    /// - A waiting consumer implies an open state, an empty memory buffer, no spilled records and
    ///   no read in flight.
    /// - Every accepted element is delivered, discarded, in memory or in the spill file.
    @usableFromInline
    struct StateMachine<Consumer> {
        /// The stream's lifecycle.
        @usableFromInline
        enum State {
            /// Accepting yields.
            case open
            /// ``PushBuffer/finish()`` was called: the consumer drains, then receives nil.
            case finished
            /// ``PushBuffer/fail(_:)`` was called: the consumer drains, then receives the error.
            case failed(any Error)
            /// The buffer overflowed (capacity, spill limit or spill write): the consumer drains,
            /// then receives the error; later yields are rejected.
            case overflowed(any Error)
            /// The consumer went away; later yields are handed back as terminated.
            case terminated
        }

        /// Where the single consumer is.
        @usableFromInline
        enum ConsumerState {
            /// Not suspended in `next()`.
            case idle
            /// `next()` decided to suspend as `id`; its continuation is not registered yet.
            case pending(id: Int)
            /// Suspended in `next()` on `consumer`.
            case waiting(id: Int, consumer: Consumer)
        }

        /// An element in memory with its weight in bytes.
        @usableFromInline
        struct Buffered: Sendable {
            @usableFromInline var element: Element
            @usableFromInline var weight: Int

            @inlinable
            init(element: Element, weight: Int) {
                self.element = element
                self.weight = weight
            }
        }

        /// The spill file's bookkeeping (the writer's own state lives in ``PushBuffer/SpillWriter``).
        @usableFromInline
        struct SpillLedger {
            /// Records written and not yet handed to the consumer.
            @usableFromInline var records = 0
            /// The sum of their weights.
            @usableFromInline var bytes: Int64 = 0
            /// The file offset of the first unread record.
            @usableFromInline var readOffset: Int64 = 0
            /// A producer decided to spill and is writing (under the spill writer's lock).
            @usableFromInline var isReserved = false
            /// The consumer is reading records back.
            @usableFromInline var isReading = false
            /// The spill file's descriptor, once a record was written.
            @usableFromInline var descriptor: FileDescriptor?

            @inlinable
            init() {}

            /// Whether new elements must go to the spill file to keep the order.
            @inlinable
            var isActive: Bool { records > 0 || isReserved || isReading }
        }

        /// A read of spilled records the consumer performs outside the lock.
        @usableFromInline
        struct SpillRead: Equatable {
            /// The spill file.
            @usableFromInline var descriptor: FileDescriptor
            /// Where the first record starts.
            @usableFromInline var offset: Int64
            /// The most records to read back (they all exist; at most the capacity).
            @usableFromInline var maxRecords: Int
            /// The memory buffer's byte budget: read-back stops before the record that would
            /// pass it (``BufferAdmission``), as a yield would.
            @usableFromInline var byteBudget: Int?

            @inlinable
            init(descriptor: FileDescriptor, offset: Int64, maxRecords: Int, byteBudget: Int?) {
                self.descriptor = descriptor
                self.offset = offset
                self.maxRecords = maxRecords
                self.byteBudget = byteBudget
            }
        }

        /// Capacity of the memory buffer, in elements (>= 1).
        @usableFromInline let capacity: Int
        /// Optional bound on the bytes (sum of weights) in the memory buffer.
        @usableFromInline let byteBudget: Int?
        /// Buffered count (memory plus spill) at which yields answer "pause".
        @usableFromInline let highWatermark: Int
        /// Buffered count below which a paused source is resumed.
        @usableFromInline let lowWatermark: Int
        /// Whether overflow spills to a file (otherwise it fails).
        @usableFromInline let spills: Bool

        @usableFromInline var state: State = .open
        @usableFromInline var consumer: ConsumerState = .idle
        @usableFromInline var hasIterator = false
        @usableFromInline var buffer = FIFOBuffer<Buffered>()
        @usableFromInline var bufferedBytes = 0
        @usableFromInline var spill = SpillLedger()
        @usableFromInline var isPaused = false
        /// How many times the source was told to pause; a resume decided at one count is not
        /// delivered once a newer pause was answered.
        @usableFromInline var pauseCount = 0
        @usableFromInline var nextID = 0
        @usableFromInline var counters = Statistics()

        /// Creates an open, empty machine.
        ///
        /// - Parameters:
        ///   - capacity: the most elements the memory buffer holds; must be >= 1.
        ///   - byteBudget: the most bytes the memory buffer holds, if bounded; must be >= 0.
        ///   - highWatermark: the buffered count from which yields answer "pause"; >= 1.
        ///   - lowWatermark: the count below which a paused source resumes; 1...highWatermark.
        ///   - spills: whether overflow goes to a spill file.
        @inlinable
        init(capacity: Int, byteBudget: Int?, highWatermark: Int, lowWatermark: Int, spills: Bool) {
            precondition(capacity >= 1, "PushBuffer capacity must be at least 1, got \(capacity)")
            precondition((byteBudget ?? 0) >= 0, "PushBuffer byteBudget must not be negative")
            precondition(highWatermark >= 1, "PushBuffer highWatermark must be at least 1")
            precondition(
                lowWatermark >= 1 && lowWatermark <= highWatermark,
                "PushBuffer lowWatermark must be in 1...highWatermark")
            self.capacity = capacity
            self.byteBudget = byteBudget
            self.highWatermark = highWatermark
            self.lowWatermark = lowWatermark
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
            /// Write the element to the spill file, then report ``spillWritten(weight:)`` or
            /// ``spillFailed(_:)``. `rewind`: nothing is unread, so the writer starts again at
            /// offset 0.
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
            switch state {
            case .open: break
            case .overflowed: return .reject(stopSource: false)
            case .finished, .failed, .terminated: return .terminate
            }
            if case .waiting(_, let waitingConsumer) = consumer {
                assert(buffer.isEmpty && !spill.isActive)
                consumer = .idle
                counters.acceptedCount += 1
                counters.deliveredCount += 1
                // Handed over directly: it passed through the buffer, alone, for an instant.
                notePeak(count: 1, bytes: weight)
                return .resumeConsumer(waitingConsumer, element)
            }
            if !spill.isActive && hasRoom(forWeight: weight) {
                store(Buffered(element: element, weight: weight))
                counters.acceptedCount += 1
                return .enqueued(raiseDemand())
            }
            if spills {
                let rewind = !spill.isActive
                if rewind { spill.readOffset = 0 }
                spill.isReserved = true
                return .spill(rewind: rewind)
            }
            state = .overflowed(overflowError(spillLimit: nil))
            return .reject(stopSource: true)
        }

        /// What a producer does after writing to the spill file.
        @usableFromInline
        enum SpillWrittenAction {
            /// Return ``PushBuffer/YieldResult/spilled(_:)`` with this demand, after resuming the
            /// consumer if given (with ``ConsumerWake/retry``).
            case spilled(Demand, resumingConsumer: Consumer?)
            /// The consumer went away during the write: hand the element back as terminated.
            case terminate
        }

        /// The reserved record of `weight` bytes is in the spill file, at `descriptor`.
        @inlinable
        mutating func spillWritten(weight: Int, descriptor: FileDescriptor) -> SpillWrittenAction {
            defer { checkInvariants() }
            assert(spill.isReserved)
            spill.isReserved = false
            guard case .open = state else {
                // Only the consumer's departure can end the stream during a write (finish and
                // fail wait for the writer); nobody will read the record.
                return .terminate
            }
            spill.descriptor = descriptor
            spill.records += 1
            spill.bytes += Int64(weight)
            counters.acceptedCount += 1
            counters.spilledCount += 1
            counters.peakSpilledCount = Swift.max(counters.peakSpilledCount, spill.records)
            let demand = raiseDemand()
            if case .waiting(_, let waitingConsumer) = consumer {
                consumer = .idle
                return .spilled(demand, resumingConsumer: waitingConsumer)
            }
            return .spilled(demand, resumingConsumer: nil)
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

        /// The reserved spill write failed with `error`, or would have passed the spill file's
        /// limit (then `error` is nil and the machine makes the ``CapacityExceededError``).
        @inlinable
        mutating func spillFailed(_ error: (any Error)?, spillLimit: Int64) -> SpillFailedAction {
            defer { checkInvariants() }
            assert(spill.isReserved)
            spill.isReserved = false
            guard case .open = state else { return .terminate }
            state = .overflowed(error ?? overflowError(spillLimit: spillLimit))
            if case .waiting(_, let waitingConsumer) = consumer {
                consumer = .idle
                return .reject(stopSource: true, resumingConsumer: waitingConsumer)
            }
            return .reject(stopSource: true, resumingConsumer: nil)
        }

        /// What ``PushBuffer/finish()`` and ``PushBuffer/fail(_:)`` do.
        @usableFromInline
        enum FinishAction {
            /// Nothing more: the consumer will find the end when it drains.
            case none
            /// Resume the waiting consumer with this.
            case resumeConsumer(Consumer, ConsumerWake)
        }

        /// The source ends the stream: the consumer gets nil after the buffered elements.
        @inlinable
        mutating func finish() -> FinishAction {
            defer { checkInvariants() }
            return end(.finished, wake: .end)
        }

        /// The source fails the stream: the consumer gets `error` after the buffered elements.
        @inlinable
        mutating func fail(_ error: any Error) -> FinishAction {
            defer { checkInvariants() }
            return end(.failed(error), wake: .failure(error))
        }

        // MARK: Consumer events

        /// What the caller of `makeAsyncIterator()` does.
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

        /// What the consumer does in `next()`.
        @usableFromInline
        enum NextAction {
            /// Return the element; first, if `resume` is set (the buffer just drained below the low
            /// watermark), run the resume callback unless ``isResumeCurrent(_:)`` says a newer
            /// pause overtook it.
            case returnElement(Element, resume: Int?)
            /// Read spilled records back (outside the lock, on the blocking-I/O executor), then
            /// report ``spillRead(_:endOffset:)`` or ``spillReadFailed(_:)``.
            case readSpill(SpillRead)
            /// Return nil: finished and drained.
            case returnNil
            /// Throw this error: failed or overflowed, and drained.
            case throwError(any Error)
            /// Throw `CancellationError`: the consumer has gone away.
            case throwCancellation
            /// Suspend as `id`: register with ``consumerSuspended(id:consumer:)``; on
            /// cancellation call ``consumerCancelled(id:)``.
            case suspend(id: Int)
        }

        /// The consumer asks for the next element.
        @inlinable
        mutating func next() -> NextAction {
            defer { checkInvariants() }
            guard case .idle = consumer, !spill.isReading else {
                preconditionFailure("PushBuffer.next() called while another next() is in progress")
            }
            if let item = buffer.popFirst() {
                bufferedBytes -= item.weight
                counters.deliveredCount += 1
                return .returnElement(item.element, resume: lowerDemand())
            }
            if spill.records > 0, let descriptor = spill.descriptor {
                spill.isReading = true
                return .readSpill(SpillRead(
                    descriptor: descriptor, offset: spill.readOffset,
                    maxRecords: Swift.min(spill.records, capacity), byteBudget: byteBudget))
            }
            switch state {
            case .open:
                nextID &+= 1
                consumer = .pending(id: nextID)
                return .suspend(id: nextID)
            case .finished:
                return .returnNil
            case .failed(let error), .overflowed(let error):
                return .throwError(error)
            case .terminated:
                return .throwCancellation
            }
        }

        /// The consumer read `elements` (with their weights) back from the spill file; the next
        /// unread record starts at `endOffset`.
        @inlinable
        mutating func spillRead(_ elements: [Buffered], endOffset: Int64) -> NextAction {
            defer { checkInvariants() }
            assert(spill.isReading && buffer.isEmpty && !elements.isEmpty)
            spill.isReading = false
            if case .terminated = state { return .throwCancellation }  // counted as discarded already
            spill.records -= elements.count
            spill.readOffset = endOffset
            for item in elements {
                spill.bytes -= Int64(item.weight)
                store(item)
            }
            return next()
        }

        /// Whether a resume decided at `pauseCount` still stands: no pause was answered since,
        /// and the stream is still open.
        @inlinable
        func isResumeCurrent(_ decidedAt: Int) -> Bool {
            pauseCount == decidedAt && !isPaused && isOpen
        }

        /// Reading spilled records back failed with `error`: the stream fails with it.
        ///
        /// - Returns: whether to run the cancellation hook (the stream was open).
        @inlinable
        mutating func spillReadFailed(_ error: any Error) -> Bool {
            defer { checkInvariants() }
            assert(spill.isReading)
            spill.isReading = false
            counters.discardedCount += spill.records
            spill.records = 0
            spill.bytes = 0
            switch state {
            case .terminated:
                return false
            case .open:
                state = .failed(error)
                return true
            case .finished, .failed, .overflowed:
                state = .failed(error)
                return false
            }
        }

        /// What the consumer does after registering its continuation.
        @usableFromInline
        enum ConsumerSuspendedAction {
            /// Stay suspended until an element, the end, or cancellation.
            case wait
            /// Resume the consumer at once with this.
            case resumeConsumer(Consumer, ConsumerWake)
        }

        /// The consumer told to suspend as `id` registers its handle.
        @inlinable
        mutating func consumerSuspended(id: Int, consumer handle: Consumer) -> ConsumerSuspendedAction {
            defer { checkInvariants() }
            guard case .pending(let pendingID) = consumer, pendingID == id else {
                // Answered before it registered: cancelled, or woken with retry.
                if case .terminated = state { return .resumeConsumer(handle, .failure(CancellationError())) }
                return .resumeConsumer(handle, .retry)
            }
            if case .open = state, buffer.isEmpty, spill.records == 0 {
                consumer = .waiting(id: id, consumer: handle)
                return .wait
            }
            consumer = .idle
            return .resumeConsumer(handle, .retry)
        }

        /// What ends the stream for the consumer's side.
        @usableFromInline
        enum TerminateAction {
            /// Nothing to do.
            case none
            /// Resume the consumer (if it was waiting) with `CancellationError`, and run the
            /// source's cancellation hook if `stopSource`.
            case terminate(consumer: Consumer?, stopSource: Bool)
        }

        /// The task of the consumer suspended (or about to suspend) as `id` was cancelled.
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

        /// The consumer went away outside a suspension: its iterator was dropped, or it called
        /// `next()` in a cancelled task. Idempotent.
        @inlinable
        mutating func consumerTerminated() -> TerminateAction {
            defer { checkInvariants() }
            return terminate(consumer: nil)
        }

        /// The counters now.
        @inlinable
        var statistics: Statistics {
            var statistics = counters
            statistics.bufferedCount = buffer.count
            statistics.spilledBacklog = spill.records
            return statistics
        }
    }
}

extension PushBuffer.StateMachine.YieldAction: Sendable where Consumer: Sendable {}
extension PushBuffer.StateMachine.SpillWrittenAction: Sendable where Consumer: Sendable {}
extension PushBuffer.StateMachine.SpillFailedAction: Sendable where Consumer: Sendable {}
