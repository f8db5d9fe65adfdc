/// Runs the regular files of a `TreeCopy`: the seam between the walk and an engine that
/// copies many files at once.
///
/// ``submit(_:completion:)`` may return before the job has run (an engine queues it); the job's
/// outcome comes through `completion`, called exactly once, from any thread. `TreeCopy`
/// applies directory attributes and makes hard links to regular files only after
/// ``waitForAll()`` returned, so a runner never has to order jobs.
package protocol FileJobRunner: Sendable {
    /// Starts or queues `job`.
    ///
    /// - Parameters:
    ///   - job: the file to copy; ``FileJob/run()`` does it.
    ///   - completion: called once with the job's report or error (`CancellationError`
    ///   for a job stopped by cancellation).
    /// - Throws: `CancellationError` when the copy should stop (the task was cancelled); no
    ///   other error: a job's failure goes to `completion`.
    func submit(_ job: FileJob, completion: @escaping @Sendable (Result<CopyReport, any Error>) -> Void) async throws

    /// Returns once every job submitted so far has completed (its `completion` called).
    func waitForAll() async

    /// After an open of the walk failed for want of descriptors (`EMFILE`, `ENFILE`): makes
    /// the runner release the descriptors it holds and will release (files in flight, files
    /// waiting for their batch, directories waiting for their sync) and waits until it has.
    /// Blocks: called on the walk's own thread.
    ///
    /// - Returns: whether descriptors were released, so that the open may succeed if tried
    ///   again; `false` (the default) when the runner holds none.
    func waitForReleasedDescriptors() -> Bool

    /// Waits until no file handed over holds descriptors (each has ended, or is sealed and
    /// closed for its batch): what a walk under a very low limit on open files calls before
    /// it opens a directory (`DescriptorBudget.copiesOneFileAtATime`). Blocks: called on the
    /// walk's own thread.
    func waitUntilNoFileHoldsDescriptors()

    /// The progress the runner's engine publishes; `nil` (the default) for one without.
    var progress: ManyFilesProgress? { get }

    /// The engine's totals once ``waitForAll()`` returned; `nil` (the default) for a runner
    /// without an engine.
    var totals: Copier.Totals? { get }
}

extension FileJobRunner {
    package var progress: ManyFilesProgress? { nil }

    package var totals: Copier.Totals? { nil }

    /// A runner that holds no descriptors between its jobs releases none: `false`.
    package func waitForReleasedDescriptors() -> Bool { false }

    /// A runner whose ``submit(_:completion:)`` returns once the file is done holds none
    /// between its jobs: returns at once.
    package func waitUntilNoFileHoldsDescriptors() {}
}

/// The simplest ``FileJobRunner``: each job runs to its end inside ``submit(_:completion:)``,
/// one file at a time.
package struct SequentialFileJobRunner: FileJobRunner {
    /// The gate the jobs commit through.
    package let gate: CommitGate

    /// Creates a runner.
    package init() {
        self.init(gate: .shared)
    }

    /// Creates a runner committing through `gate` (tests keep one of their own).
    package init(gate: CommitGate) {
        self.gate = gate
    }

    /// Runs `job` to its end, then calls `completion`.
    ///
    /// - Throws: `CancellationError` if the task was cancelled.
    package func submit(_ job: FileJob, completion: @escaping @Sendable (Result<CopyReport, any Error>) -> Void) async throws {
        do {
            completion(.success(try await job.run(gate: gate)))
        } catch {
            completion(.failure(error))
        }
        try Task.checkCancellation()
    }

    /// Returns at once: every job has completed in ``submit(_:completion:)``.
    package func waitForAll() async {}
}
