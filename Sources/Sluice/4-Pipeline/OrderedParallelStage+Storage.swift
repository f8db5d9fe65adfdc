extension OrderedParallelStage {
    /// Internal observation points for tests, so they can order events without sleeping.
    ///
    /// Each hook runs on the task that suspends, after the stage's lock is released and after
    /// that task's continuation is registered: once it has run, the event that resumes the task
    /// (a result, room, a cancellation) reaches it.
    struct Hooks: Sendable {
        /// The submitter found the stage full and is suspended.
        var submitterSuspended: (@Sendable () -> Void)?
        /// The consumer found the oldest result unfinished and is suspended.
        var consumerSuspended: (@Sendable () -> Void)?
    }

    /// One worker: its thread, and the per-block function made on that thread.
    final class Worker: @unchecked Sendable {
        // @unchecked: `work` is read and written only by the jobs this worker runs on its
        // executor's thread, one at a time; the executor's queue orders them.
        let executor: BlockingIOExecutor
        /// Made by the stage's factory at the worker's first block; `nil` until then.
        var work: Work?

        init(label: String) {
            executor = BlockingIOExecutor(label: label)
        }
    }

    /// Owns the lock around the ``StateMachine``, the workers, and every side effect the
    /// machine decides: starting a worker, resuming the submitter, the consumer and the tasks
    /// waiting to close. Each operation decides inside `machine.withLock` and acts after it
    /// returns.
    final class Storage: Sendable {
        typealias SubmitterContinuation = CheckedContinuation<Void, Never>
        typealias ConsumerContinuation = CheckedContinuation<Result<Output?, any Error>, Never>
        typealias CloserContinuation = CheckedContinuation<Void, Never>
        typealias Machine = StateMachine<SubmitterContinuation, ConsumerContinuation, CloserContinuation>

        let machine: LockedValue<Machine>
        let workers: [Worker]
        let makeWork: WorkerFactory
        let hooks: Hooks

        init(workerCount: Int, maximumInFlight: Int, label: String, makeWork: @escaping WorkerFactory, hooks: Hooks) {
            machine = LockedValue(Machine(workerCount: workerCount, maximumInFlight: maximumInFlight))
            workers = (0..<workerCount).map { Worker(label: "\(label)-\($0)") }
            self.makeWork = makeWork
            self.hooks = hooks
        }

        // MARK: The submitter

        func submit(_ input: Input) async throws {
            while true {
                switch machine.withLock({ $0.submit(input) }) {
                case .start(let worker, let job):
                    start(worker, job)
                    return
                case .queued:
                    return
                case .fail(let error):
                    throw error
                case .wait:
                    break
                }
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: SubmitterContinuation) in
                        if let resumed = machine.withLock({ $0.submitterWaits(continuation) }) {
                            resumed.resume()
                        } else {
                            hooks.submitterSuspended?()
                        }
                    }
                } onCancel: {
                    cancel()
                }
            }
        }

        // MARK: The consumer

        func next() async throws -> Output? {
            switch machine.withLock({ $0.next() }) {
            case .deliver(let output, let submitter):
                submitter?.resume()
                return output
            case .end:
                return nil
            case .fail(let error):
                throw error
            case .notReady:
                break
            }
            let result = await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: ConsumerContinuation) in
                    switch machine.withLock({ $0.consumerWaits(continuation) }) {
                    case .wait:
                        hooks.consumerSuspended?()
                    case .resume(let resumption, let submitter):
                        submitter?.resume()
                        resumption.consumer.resume(returning: resumption.result)
                    }
                }
            } onCancel: {
                cancel()
            }
            return try result.get()
        }

        func nextIfReady() throws -> Output? {
            switch machine.withLock({ $0.next() }) {
            case .deliver(let output, let submitter):
                submitter?.resume()
                return output
            case .end, .notReady:
                return nil
            case .fail(let error):
                throw error
            }
        }

        var isFull: Bool { machine.withLock { $0.isFull } }

        var peakInFlight: Int { machine.withLock { $0.peakInFlight } }

        // MARK: Ending

        func finish() {
            if let resumption = machine.withLock({ $0.finish() }) {
                resumption.consumer.resume(returning: resumption.result)
            }
        }

        func cancel() {
            let action = machine.withLock { $0.cancel() }
            action.submitter?.resume()
            if let resumption = action.consumer {
                resumption.consumer.resume(returning: resumption.result)
            }
        }

        func close() async {
            cancel()
            await withCheckedContinuation { (continuation: CloserContinuation) in
                machine.withLock { $0.closerWaits(continuation) }?.resume()
            }
        }

        // MARK: The workers

        private func start(_ worker: Int, _ job: Machine.Job) {
            workers[worker].executor.execute { self.run(worker: worker, first: job) }
        }

        /// Runs `first` on the worker's thread, then every block the machine hands this worker
        /// when it reports a result, until it has none for it.
        private func run(worker index: Int, first: Machine.Job) {
            let worker = workers[index]
            var job = first
            // A stop between handing the worker its block and its thread taking it up: the
            // block is dropped unrun. Later blocks come from the machine, which hands out none
            // after a stop.
            var isStopped = !machine.withLock { $0.isRunning }
            while true {
                let result: Result<Output, any Error> = isStopped ? .failure(CancellationError()) : Result {
                    if worker.work == nil { worker.work = try makeWork() }
                    return try worker.work!(job.input)
                }
                isStopped = false
                let action = machine.withLock { $0.workerFinished(index, sequence: job.sequence, result: result) }
                action.submitter?.resume()
                if let resumption = action.consumer {
                    resumption.consumer.resume(returning: resumption.result)
                }
                for closer in action.closers { closer.resume() }
                guard let next = action.nextJob else { return }
                job = next
            }
        }
    }
}
