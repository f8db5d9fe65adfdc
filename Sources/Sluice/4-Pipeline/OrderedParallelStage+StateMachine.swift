extension OrderedParallelStage {
    /// The stage's decisions: which worker takes which block, when the submitter and the
    /// consumer wait and resume, and what stopping discards.
    ///
    /// Generic over the handles it stores for the waiting submitter, the waiting consumer and
    /// the tasks waiting in ``OrderedParallelStage/close()``, so ``OrderedParallelStage/Storage``
    /// stores continuations and tests store plain values. Every event returns what to do after
    /// the lock is released; nothing here resumes, calls or waits.
    ///
    /// Invariants (``checkInvariants()``): `delivered <= submitted`, and the blocks in flight
    /// (`submitted - delivered`) are at most `maximumInFlight` (a block counts from its
    /// submission until its result is handed out); a waiting block has no idle worker to take it;
    /// once the stage failed or was cancelled, no block waits and no result is kept.
    struct StateMachine<Submitter: Sendable, Consumer: Sendable, Closer: Sendable> {
        /// A block to work on: its place in the input order, and the input itself.
        struct Job: Sendable {
            /// 0 for the first block submitted, then 1, 2, …
            var sequence: Int
            var input: Input
        }

        /// Where the stage is in its life.
        enum Lifecycle: Sendable {
            /// Blocks may be submitted.
            case open
            /// ``finish()`` was called: no more blocks; the results still leave in order.
            case finished
            /// A worker threw: every later call reports this error.
            case failed(any Error)
            /// ``cancel()`` was called (or a waiting task was cancelled) before the end.
            case cancelled
        }

        /// A waiting consumer to resume, and with what: a result, `nil` for the end, or an error.
        typealias ConsumerResumption = (consumer: Consumer, result: Result<Output?, any Error>)

        let workerCount: Int
        let maximumInFlight: Int
        private(set) var lifecycle = Lifecycle.open
        /// Blocks submitted so far: the sequence of the next one.
        private(set) var submitted = 0
        /// Results handed out so far: the sequence of the next one to hand out.
        private(set) var delivered = 0
        /// The most blocks that were in flight at once.
        private(set) var peakInFlight = 0
        /// Blocks submitted while every worker was busy, in order.
        private var waiting = FIFOBuffer<Job>()
        /// Workers with nothing to do (a stack: the last to finish is the first to start again).
        private var idleWorkers: [Int]
        /// Results finished before an earlier block's, by sequence.
        private var results: [Int: Output] = [:]
        private var submitter: Submitter?
        private var consumer: Consumer?
        private var closers: [Closer] = []

        /// Creates an open stage with every worker idle.
        ///
        /// - Parameters:
        ///   - workerCount: the count of workers; must be >= 1.
        ///   - maximumInFlight: the most blocks in flight; must be >= 1.
        init(workerCount: Int, maximumInFlight: Int) {
            precondition(workerCount >= 1, "OrderedParallelStage needs at least 1 worker, got \(workerCount)")
            precondition(maximumInFlight >= 1, "OrderedParallelStage maximumInFlight must be at least 1, got \(maximumInFlight)")
            self.workerCount = workerCount
            self.maximumInFlight = maximumInFlight
            idleWorkers = Array((0..<workerCount).reversed())
        }

        /// Blocks submitted and not yet handed out: waiting, being worked on, or finished.
        var inFlight: Int { submitted - delivered }

        /// Workers running the per-block function now.
        var busyWorkers: Int { workerCount - idleWorkers.count }

        /// Whether a submission would be taken without waiting.
        var isFull: Bool { inFlight >= maximumInFlight }

        // MARK: The submitter

        /// What ``submit(_:)`` does next.
        enum SubmitAction: Sendable {
            /// Run the job on this idle worker, then return.
            case start(worker: Int, Job)
            /// The job waits for a worker; return.
            case queued
            /// The stage is full: register with ``submitterWaits(_:)``, then try again.
            case wait
            /// Throw this: the worker's error, or `CancellationError`.
            case fail(any Error)
        }

        /// The submitter offers the next block.
        mutating func submit(_ input: Input) -> SubmitAction {
            defer { checkInvariants() }
            switch lifecycle {
            case .failed(let error): return .fail(error)
            case .cancelled: return .fail(CancellationError())
            case .finished: preconditionFailure("OrderedParallelStage.submit(_:) called after finish()")
            case .open: break
            }
            guard !isFull else { return .wait }
            let job = Job(sequence: submitted, input: input)
            submitted += 1
            peakInFlight = Swift.max(peakInFlight, inFlight)
            if let worker = idleWorkers.popLast() {
                return .start(worker: worker, job)
            }
            waiting.append(job)
            return .queued
        }

        /// The submitter told to wait registers its handle.
        ///
        /// - Returns: the handle to resume at once when there is room now or the stage stopped
        ///   (the submitter then tries again); `nil` when it waits.
        mutating func submitterWaits(_ handle: Submitter) -> Submitter? {
            defer { checkInvariants() }
            precondition(submitter == nil, "OrderedParallelStage.submit(_:) called by two tasks at once")
            guard case .open = lifecycle, isFull else { return handle }
            submitter = handle
            return nil
        }

        // MARK: The consumer

        /// What ``next()`` does.
        enum NextAction: Sendable {
            /// Return this result; resume the submitter, if given, now that there is room.
            case deliver(Output, resumingSubmitter: Submitter?)
            /// Return `nil`: every result was handed out after ``finish()``.
            case end
            /// Throw this: the worker's error, or `CancellationError`.
            case fail(any Error)
            /// The oldest block is not finished yet.
            case notReady
        }

        /// The consumer asks for the oldest result.
        mutating func next() -> NextAction {
            defer { checkInvariants() }
            switch lifecycle {
            case .failed(let error): return .fail(error)
            case .cancelled: return .fail(CancellationError())
            case .open, .finished: break
            }
            if let output = results.removeValue(forKey: delivered) {
                delivered += 1
                return .deliver(output, resumingSubmitter: takeSubmitterIfRoom())
            }
            if case .finished = lifecycle, delivered == submitted { return .end }
            return .notReady
        }

        /// What the consumer does after registering its handle.
        enum ConsumerWaitsAction: Sendable {
            /// Stay suspended: a worker or a stop resumes it.
            case wait
            /// Resume the consumer at once with this, and the submitter if given.
            case resume(ConsumerResumption, resumingSubmitter: Submitter?)
        }

        /// The consumer found nothing ready and registers its handle; what became ready in
        /// between is answered at once.
        mutating func consumerWaits(_ handle: Consumer) -> ConsumerWaitsAction {
            precondition(consumer == nil, "OrderedParallelStage.next() called by two tasks at once")
            switch next() {
            case .notReady:
                consumer = handle
                return .wait
            case .deliver(let output, let submitter):
                return .resume((handle, .success(output)), resumingSubmitter: submitter)
            case .end:
                return .resume((handle, .success(nil)), resumingSubmitter: nil)
            case .fail(let error):
                return .resume((handle, .failure(error)), resumingSubmitter: nil)
            }
        }

        // MARK: The workers

        /// What a worker and the stage do after the worker finished a block.
        struct WorkerAction: Sendable {
            /// The block the worker runs next, on the same thread; `nil`: it goes idle.
            var nextJob: Job?
            var consumer: ConsumerResumption?
            var submitter: Submitter?
            /// Tasks waiting in ``OrderedParallelStage/close()`` to resume: no worker is busy.
            var closers: [Closer] = []
        }

        /// `worker` finished the block `sequence` with `result`.
        mutating func workerFinished(_ worker: Int, sequence: Int, result: Result<Output, any Error>) -> WorkerAction {
            defer { checkInvariants() }
            var action = WorkerAction()
            if isRunning {
                switch result {
                case .success(let output):
                    if sequence == delivered, let consumer = consumer.take() {
                        delivered += 1
                        action.consumer = (consumer, .success(output))
                        action.submitter = takeSubmitterIfRoom()
                    } else {
                        results[sequence] = output
                    }
                case .failure(let error):
                    // The first error wins; what it stops reports it, not a cancellation.
                    lifecycle = .failed(error)
                    (action.consumer, action.submitter) = discardEverything(reporting: error)
                }
            }
            // After a stop, a late result is dropped here and the worker takes nothing more.
            if isRunning, let job = waiting.popFirst() {
                action.nextJob = job
            } else {
                idleWorkers.append(worker)
                if busyWorkers == 0 { swap(&action.closers, &closers) }
            }
            return action
        }

        // MARK: Ending

        /// No more blocks: the consumer receives `nil` after the last result.
        ///
        /// - Returns: the waiting consumer to resume with `nil`, when every result was already
        ///   handed out. Does nothing after a failure or cancellation, or a second time.
        mutating func finish() -> ConsumerResumption? {
            defer { checkInvariants() }
            guard case .open = lifecycle else { return nil }
            lifecycle = .finished
            guard delivered == submitted, let consumer = consumer.take() else { return nil }
            return (consumer, .success(nil))
        }

        /// What stopping resumes.
        struct StopAction: Sendable {
            var consumer: ConsumerResumption?
            var submitter: Submitter?
        }

        /// Stops the stage: blocks not started are dropped, results not handed out are
        /// discarded, the waiting submitter and consumer receive `CancellationError`. Blocks
        /// being worked on run to their end and their results are dropped.
        ///
        /// Does nothing after a worker's error (which stands) or a second time, nor once every
        /// result was handed out after ``finish()``.
        mutating func cancel() -> StopAction {
            defer { checkInvariants() }
            switch lifecycle {
            case .failed, .cancelled: return StopAction()
            case .finished where delivered == submitted: return StopAction()
            case .open, .finished: break
            }
            lifecycle = .cancelled
            let (consumer, submitter) = discardEverything(reporting: CancellationError())
            return StopAction(consumer: consumer, submitter: submitter)
        }

        /// A task waits until no worker is busy.
        ///
        /// - Returns: the handle to resume at once when no worker is busy; `nil` when it waits
        ///   for the last busy worker to finish.
        mutating func closerWaits(_ handle: Closer) -> Closer? {
            guard busyWorkers > 0 else { return handle }
            closers.append(handle)
            return nil
        }

        // MARK: Bookkeeping

        /// Whether results are still wanted: open, or finished and not all handed out.
        var isRunning: Bool {
            switch lifecycle {
            case .open, .finished: true
            case .failed, .cancelled: false
            }
        }

        /// The waiting submitter, when a block may be submitted now.
        private mutating func takeSubmitterIfRoom() -> Submitter? {
            isFull ? nil : submitter.take()
        }

        /// Drops every waiting block and finished result; hands back the waiting consumer (with
        /// `error`) and submitter to resume.
        private mutating func discardEverything(reporting error: any Error) -> (ConsumerResumption?, Submitter?) {
            waiting.removeAll()
            results.removeAll()
            return (consumer.take().map { ($0, .failure(error)) }, submitter.take())
        }

        /// Traps (in debug builds) when a documented invariant is broken.
        func checkInvariants() {
            assert(delivered <= submitted, "more results handed out than blocks submitted")
            assert(inFlight <= maximumInFlight, "more blocks in flight than the stage allows")
            assert(waiting.isEmpty || idleWorkers.isEmpty, "a block waits while a worker is idle")
            assert(isRunning || (waiting.isEmpty && results.isEmpty), "a stopped stage keeps blocks")
        }
    }
}
