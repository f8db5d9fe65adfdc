/// Runs a `TreeCopy`'s regular files through a ``Copier``: many files at once, within
/// one byte budget, each directory synced once for the batch instead of once per file.
///
/// Each ``FileJob`` becomes a ``Copier/Job`` at the job's locations (names in open
/// directories, so any depth), with the tree's sink options, per-file copy options and chunk
/// size (`TreeCopy.Options.file`, `TreeCopy.Options.chunkSize`); with
/// `TreeCopy.Options.preservesAttributes`, each file gets the source's extended attributes
/// (and ACLs) on its open temporary, before its commit point. Every file found adds
/// itself and its bytes to the engine's totals, which grow while the walk runs
/// (``Copier/addToTotal(bytes:files:)``); ``waitForAll()`` marks them complete and
/// finishes the engine, after which every rename is durable (unless `--no-fsync`) and
/// ``totals`` holds the engine's counts. Several trees of one operation (`copy -r a b dest/`)
/// share one progress when each runner is handed it: the totals then grow over every tree, and
/// the progress ends when its owner finishes it, not with each tree.
///
/// Concurrency contract: as ``FileJobRunner``: ``submit(_:completion:)`` from the walk's task
/// (it suspends while the engine's files in flight are at its width), ``waitForAll()`` once,
/// after the last submit. Cancelling the submitting task cancels the engine.
package final class ManyFileJobRunner: FileJobRunner {
    /// The engine the files go through; subscribe to its ``Copier/progress`` before the
    /// copy starts.
    package let engine: Copier
    private let finished = LockedValue<Copier.Totals?>(nil)
    private let onOutcome: @Sendable (Copier.Outcome) -> Void

    /// A runner over a new engine made with `options` (of which the width, the byte budget and
    /// the batch's wait are used; how each file is copied is the tree's), with the system calls
    /// of the engine's files (the seam for tests). `progress`: the operation's progress, shared
    /// with other runners (created with `isTotalGrowing`; its owner finishes it); `nil`: the
    /// engine's own. `completesTotal`: whether the walk's end completes a shared progress's
    /// totals; an own progress is always completed then. `onOutcome` is called with each
    /// file's outcome, on an engine thread; it must not block.
    /// `ownsProgress`: whether the engine finishes `progress` (a `TreeCopy`'s own, made
    /// before the copy runs); `nil`: only when it made the progress itself.
    init(
        options: Copier.Options, progress: ManyFilesProgress? = nil, ownsProgress: Bool? = nil,
        completesTotal: Bool = false, system: SystemCalls, onOutcome: @escaping @Sendable (Copier.Outcome) -> Void
    ) {
        let ownsProgress = ownsProgress ?? (progress == nil)
        engine = Copier(
            options: options, progress: progress ?? ManyFilesProgress(isTotalGrowing: true), ownsProgress: ownsProgress,
            system: system)
        self.completesTotal = completesTotal || ownsProgress
        self.ownsEngine = true
        self.onOutcome = onOutcome
    }

    /// A runner over `engine`, a copier its owner finishes: ``waitForAll()`` waits for the
    /// jobs handed over by this runner alone, and neither completes the totals nor finishes
    /// the engine (``Copier/copyTree(from:to:options:onOutcome:onFailure:)``); with
    /// `completesTotal`, the walk's end (the call of ``waitForAll()``) completes the totals.
    init(borrowing engine: Copier, completesTotal: Bool, onOutcome: @escaping @Sendable (Copier.Outcome) -> Void) {
        self.engine = engine
        self.completesTotal = completesTotal
        self.ownsEngine = false
        self.onOutcome = onOutcome
    }

    /// Whether ``waitForAll()`` completes the progress's totals.
    private let completesTotal: Bool
    /// Whether ``waitForAll()`` finishes the engine (it made it) or only waits for the jobs
    /// handed over here (it borrowed it).
    private let ownsEngine: Bool
    /// The jobs handed over and not completed yet, and the task waiting for them to end.
    private let pending = LockedValue((count: 0, waiter: CheckedContinuation<Void, Never>?.none))

    /// The engine's totals once ``waitForAll()`` returned; `nil` before.
    package var totals: Copier.Totals? { finished.withLock { $0 } }

    /// The engine's progress.
    package var progress: ManyFilesProgress? { engine.tracker }

    /// Hands `job` to the engine.
    ///
    /// - Throws: `CancellationError` when the engine was cancelled (the job was not taken and
    ///   `completion` is not called).
    package func submit(_ job: FileJob, completion: @escaping @Sendable (Result<CopyReport, any Error>) -> Void) async throws {
        engine.addToTotal(bytes: job.status.kind == .regular ? job.status.size : 0, files: 1)
        var file = Copier.Job(
            source: job.source, destination: job.destination, sourceStatus: job.status, followsLinks: job.followsLinks,
            completion: { [onOutcome] outcome in
                onOutcome(outcome)
                completion(outcome.result.map(\.report))
                self.jobEnded()
            })
        file.preservationWarnings = job.warnings
        file.sinkOverride = job.options.fileSinkOptions
        file.copyOptions = job.options.fileCopyOptions
        file.chunkSize = job.options.chunkSize
        pending.withLock { $0.count += 1 }
        do {
            try await engine.submit(file)
        } catch {
            jobEnded()  // not taken: its completion is never called
            throw error
        }
    }

    /// Counts a job handed over as ended, and resumes ``waitForAll()`` after the last.
    private func jobEnded() {
        let waiter = pending.withLock { pending -> CheckedContinuation<Void, Never>? in
            pending.count -= 1
            guard pending.count == 0 else { return nil }
            defer { pending.waiter = nil }
            return pending.waiter
        }
        waiter?.resume()
    }

    /// Makes the engine release what it holds and waits until it has
    /// (``Copier``'s files in flight, sealed files, directories to sync).
    ///
    /// - Returns: whether descriptors were released.
    package func waitForReleasedDescriptors() -> Bool {
        engine.waitForReleasedDescriptors(holding: 0)
    }

    /// Waits until every file handed over has ended or is sealed for its batch
    /// (``Copier``'s files in flight and waiting to start).
    package func waitUntilNoFileHoldsDescriptors() {
        engine.waitUntilNoFileHoldsDescriptors()
    }

    /// Finishes the engine: waits for every file, syncs each directory renamed into once. The
    /// walk is over: the totals are complete (of a shared progress, only with `completesTotal`).
    /// The engine's own progress ends here; a shared one when its owner finishes it.
    /// A borrowed engine is not finished: the wait ends once every job handed over here has
    /// completed, and ``totals`` stays `nil` (the owner's ``Copier/finish()`` has them). A
    /// cancelled task cancels the engine, as ``Copier/copy(_:)`` does, so the files in flight
    /// end at once (nothing of them left) and the wait with them. Called once.
    package func waitForAll() async {
        if completesTotal { engine.totalIsComplete() }
        guard ownsEngine else {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                    let done = pending.withLock { pending -> Bool in
                        if pending.count == 0 { return true }
                        pending.waiter = waiter
                        return false
                    }
                    if done { waiter.resume() }
                }
            } onCancel: {
                engine.cancel()
            }
            return
        }
        let totals = await engine.finish()
        finished.withLock { $0 = totals }
    }
}
