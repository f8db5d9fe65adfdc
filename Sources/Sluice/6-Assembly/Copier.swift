#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Sluice's copier: copies (or compresses, or decompresses) one regular file (``copy(_:)``),
/// many at once (``submit(_:)``, then ``finish()``) or a directory tree
/// (``copyTree(from:to:options:onOutcome:onFailure:)``), each file atomically, all
/// within one bound on the bytes buffered, made durable by one `syncfs(2)` per batch of files
/// and one directory `fsync(2)` per directory instead of two `fsync(2)`s per file
/// (<doc:DurabilityOfManyFiles>). A job may also read a descriptor or any chunk sequence and
/// write any ``ChunkSink`` (``Job/init(from:to:transform:completion:)``): it runs the
/// pipeline within the same width, budget, rate and progress.
///
/// Jobs go in with ``submit(_:)``, which suspends while ``Options/width`` files are in flight
/// and as many more wait, or up to 16 where the process's descriptors allow (backpressure:
/// never an unbounded queue of jobs; a submitter resumes once half of those were taken, one
/// thread wake-up per half of them). Each of the
/// ``Options/width`` files' threads takes the next job itself when it ends a file (no thread
/// between them and the jobs, none woken while jobs wait). Each file then:
/// 1. takes its share of the byte budget (its chunk size and channel
///    capacity fit its share, so the bytes buffered by all files in flight stay within
///    ``Options/byteBudget``, whatever their count and sizes);
/// 2. is copied by the cheapest method the file systems allow (clone, kernel copy or the
///    pipeline, <doc:CopyPaths>) without a transform, ``Pipeline`` with one, to a ``FileSink``: a temporary file, with its
///    attributes. Durable files (``FileSink/Options/synchronizes``, without
///    verification) then wait in a batch, sealed, while the slot takes the next file: once it
///    holds 127 files (512 under a `ulimit -n` of about 4,100 or more) or 256 MiB, 5 ms after its first file, and at the end, one `syncfs(2)`
///    per file system writes their data (it waits for every writer on that file system), a
///    check of each file's own write-back makes it durable (`sync_file_range(2)`, or `fsync(2)`
///    where that cannot see the file's pages), each is closed, then renamed at
///    its commit point and completed. Other
///    files (`--no-fsync`, or with `--verify`, which syncs before it reads back) commit at once
///    on their thread. The file's reader, sink and stages all run on one thread of a pool of
///    ``Options/width``, started once for the engine: a file hands chunks over without waking
///    another thread, and starts none (a job from a descriptor or a chunk sequence, or to a sink
///    of the caller's, runs its reader or its sink where those run, on threads of their own).
///    A file of one chunk at most, dense, whose size the copier knows when it is handed over (a
///    tree's file; a ``Job`` of yours carries none), without a transform, verification or rate
///    limit, is copied in one step on that thread instead: the sink is called there without a
///    hop, no reader, channel or progress task is made, and on one file system it goes by
///    `copy_file_range(2)` where one file would take the pipeline;
/// 3. gives its share back; its job's completion (``Outcome``) is called once it is renamed
///    (or failed).
///
/// ``finish()`` waits for every file, then syncs each directory that received a rename once
/// and returns the ``Totals``. Only then is a rename durable: a caller
/// that removes sources (`--rm`) does so after ``finish()``.
///
/// A file that fails does not stop the others. Cancelling (``cancel()``, or the task waiting in
/// ``submit(_:)`` or ``finish()``) stops every file in flight at once: files already renamed
/// stay, files before their commit point are aborted (nothing of them is left), jobs not
/// started complete with `CancellationError`.
///
/// Memory per file beyond the budget: the job while it waits or runs, a receipt (its index,
/// names and completion) and its sealed file instead of the job while it waits for its batch,
/// and nothing after its completion but the distinct directories renamed into (one path each).
///
/// ```swift
/// let engine = Copier(totalBytes: sizes.reduce(0, +), totalFiles: paths.count)
/// for path in paths {
///     try await engine.submit(.init(from: .file(path), to: .file(Pathname("out").appending(path.lastComponent))))
/// }
/// let totals = await engine.finish()
/// ```
///
/// ## Concurrency contract
/// ``submit(_:)`` may be called from several tasks; indices follow the order the calls were
/// made. Completions run on the files' threads, or on the sync batch's thread for files made
/// durable in a batch, in the order files end. ``finish()`` is
/// called once, after the last ``submit(_:)``; an engine must be finished (or cancelled and
/// finished) or its worker task waits for ever.
public final class Copier: Sendable {
    /// A job as the engine holds it, numbered. A reference: it passes from the intake to a slot,
    /// its box and its run, and each hand-over is one reference count, not a copy of the job's
    /// fields (a tree copy hands over thousands of small files a second).
    final class Indexed: Sendable {
        let index: Int
        /// The file's index in the progress (`ManyFilesProgress/reserveIndex(size:)`): the engine's
        /// own index, unless the progress is shared with other engines or copies.
        let progressIndex: Int
        let job: Job

        init(index: Int, progressIndex: Int, job: Job) {
            self.index = index
            self.progressIndex = progressIndex
            self.job = job
        }
    }

    /// What completing a file needs once its copy is done: what a sealed file waiting for its
    /// batch's `syncfs(2)` keeps of its job (up to ``DescriptorBudget/maximumSealedFiles`` wait
    /// at once, so not the whole ``Job``, whose options, source and factories are spent).
    struct Receipt: Sendable {
        var index: Int
        var progressIndex: Int
        var source: Pathname
        var destination: Pathname
        var completion: @Sendable (Outcome) -> Void

        init(_ item: Indexed) {
            index = item.index
            progressIndex = item.progressIndex
            source = item.job.source
            destination = item.job.destination
            completion = item.job.completion
        }
    }

    /// The engine's state machine, over its jobs and the continuation of a slot waiting for room.
    typealias Machine = StateMachine<Indexed, CheckedContinuation<Void, Never>>

    /// The options the engine was made with.
    package let options: Options
    /// The files in flight at most: ``Options/width``, within the process's
    /// `DescriptorBudget.filesInFlightWithoutSync`.
    let width: Int
    /// The system calls of the files' sources and sinks (a test's, to script the kernel's
    /// paths); ``SystemCalls/live`` otherwise. A file of one chunk's sink uses the live ones.
    let system: SystemCalls
    let budget: ByteBudget
    let directories: DirectorySyncBatch
    let tracker: ManyFilesProgress
    /// Whether ``tracker`` is the engine's own, finished by ``finish()``; a progress it was
    /// handed is its owner's to finish.
    let ownsProgress: Bool
    /// Jobs handed over and not yet started: ``Options/width``, or up to 16 where the process's
    /// descriptors allow (`DescriptorBudget.jobsWaiting(besideFilesInFlight:)`); a submitter
    /// that found it full resumes once half of it was taken (one thread wake-up per half of it).
    private let intake: BoundedChannel<Indexed>
    /// The engine's decisions; threads out of descriptors block on its condition.
    let state: LockedCondition<Machine>
    /// Called with each event tests wait for (a file copied in one step, sealed into its batch,
    /// waiting for descriptors), on the thread where it happened; `nil` outside tests.
    let observer: (@Sendable (Event) -> Void)?

    /// One progress for all the files: subscribe before the first ``submit(_:)``. Each
    /// snapshot's ``ProgressSnapshot/files`` says the files done of the total and the file it
    /// is about; the last comes from ``finish()`` (for the `sluice` command's engines that
    /// share one operation's progress, from the command when the operation ends).
    public var progress: ProgressHub { tracker.hub }

    /// Creates an engine and starts its worker.
    ///
    /// ``progress`` shows a ``ProgressSnapshot/fraction`` only once the total is final, so that
    /// a fraction is a share of everything coming and never decreases:
    /// - Given totals (the operands' sizes, say), the fraction follows them from the start.
    /// - Given none (the defaults), the totals are the files submitted: each joins
    ///   ``ProgressSnapshot/FileCounts/total`` when submitted and its size
    ///   ``ProgressSnapshot/totalBytes`` once its source is opened (a tree's file when submitted);
    ///   the fraction is `nil` until ``finish()`` was called and every file submitted was opened
    ///   (or always, before the last snapshot, when one has no size: a pipe, a chunk sequence).
    /// - Growing (a walk): `nil` until ``totalIsComplete()``.
    ///
    /// - Parameters:
    ///   - options: files in flight, byte budget, per-file copy options.
    ///   - totalBytes: the bytes known to be copied (the operands' sizes), for progress; `nil`
    ///     for none.
    ///   - totalFiles: the files known; `nil` for none.
    ///   - isTotalGrowing: whether a walk will add more (``addToTotal(bytes:files:)``), until
    ///     ``totalIsComplete()``.
    public convenience init(
        options: Options = Options(), totalBytes: Int64? = nil, totalFiles: Int? = nil, isTotalGrowing: Bool = false
    ) {
        self.init(
            options: options,
            progress: ManyFilesProgress(totalBytes: totalBytes, totalFiles: totalFiles, isTotalGrowing: isTotalGrowing),
            ownsProgress: true, system: .live)
    }

    /// Creates an engine and starts its worker, reporting to an operation's `progress`: the
    /// progress of a command whose files go through several engines one after another (a
    /// segment of operands, each tree of several) or beside copies of their own. The engine
    /// adds its files to it (each under an index from `ManyFilesProgress/reserveIndex(size:)`)
    /// and its bytes buffered, and never finishes it: its owner calls
    /// `ManyFilesProgress/finish(interrupted:)` once the operation is over.
    ///
    /// - Parameters:
    ///   - options: files in flight, byte budget, per-file copy options.
    ///   - progress: the operation's progress; its totals are the owner's (or grow by
    ///     ``addToTotal(bytes:files:)``).
    package convenience init(options: Options = Options(), progress: ManyFilesProgress) {
        self.init(options: options, progress: progress, ownsProgress: false, system: .live)
    }

    /// The seam for tests: the same, with the system calls of the files' sources and sinks.
    package init(
        options: Options, progress: ManyFilesProgress, ownsProgress: Bool, system: SystemCalls,
        observer: (@Sendable (Event) -> Void)? = nil
    ) {
        self.options = options
        self.system = system
        self.observer = observer
        width = min(options.width, DescriptorBudget.current.filesInFlightWithoutSync)
        // A durable file may hold a directory to sync: fewer of them may be in flight.
        let durableWidth = min(width, DescriptorBudget.current.filesInFlight)
        state = LockedCondition(Machine(durableWidth: durableWidth, patience: .milliseconds(options.descriptorWaitMilliseconds)))
        let budget = ByteBudget(limit: options.byteBudget)
        self.budget = budget
        tracker = progress
        self.ownsProgress = ownsProgress
        directories = DirectorySyncBatch(system: system)
        progress.measuresBuffered { (Int64(budget.held), Int64(budget.peakHeld)) }
        let waiting = DescriptorBudget.current.jobsWaiting(besideFilesInFlight: width)
        intake = BoundedChannel(capacity: waiting, lowWatermark: waiting / 2)
        // Off the cooperative pool: when the slots end, it completes the jobs never started,
        // whose completions are the caller's code.
        let worker = Task(executorPreference: BlockingIOExecutor(label: "sluice.dispatch")) { await self.work() }
        state.withLock { $0.worker = worker }
    }

    /// Hands over one file; suspends while ``Options/width`` files are in flight and the most
    /// jobs wait to start (as many, or up to 16), until half of those were taken.
    ///
    /// - Returns: the job's index (from 0, in the order of the calls), which its ``Outcome`` carries.
    /// - Throws: `CancellationError` if the engine was cancelled or finished, or the calling task
    ///   was cancelled (which cancels the engine): the job was not taken, and its completion is
    ///   not called. (A call made while another task cancels the engine may return instead:
    ///   its job is then completed with `CancellationError`.)
    @discardableResult
    public func submit(_ job: Job) async throws(CancellationError) -> Int {
        let tracker = tracker
        // Under the engine's lock, so an engine's own progress numbers its files as it does.
        let item = try state.withLock { state throws(CancellationError) in
            try state.submit { Indexed(index: $0, progressIndex: tracker.reserveIndex(size: job.sourceStatus?.knownSize), job: job) }
        }
        let index = item.index
        do {
            try await withTaskCancellationHandler {
                try await intake.send(item)
            } onCancel: {
                self.cancel()
            }
        } catch {
            // Not taken: no completion. Unless the engine, winding down, took it from the jobs
            // waiting first: then it completes it (cancelled), and it counts as taken.
            if state.withLock({ $0.withdraw(index) }) { throw CancellationError() }
        }
        return index
    }

    /// Adds files found by a walk, and their bytes, to the totals progress shows.
    public func addToTotal(bytes: Int64, files: Int) {
        tracker.addToTotal(bytes: bytes, files: files)
    }

    /// Says the totals will not grow: progress shows them as final.
    public func totalIsComplete() {
        tracker.totalIsComplete()
    }

    /// Stops every file at once: those in flight abort before their commit point (or are
    /// committed already, or being renamed), those waiting complete with `CancellationError`,
    /// ``submit(_:)`` throws from now on. Idempotent; call ``finish()`` afterwards for the totals.
    public func cancel() {
        // First what decides: no file is started from now on, nor renamed from its batch once a
        // rename under way has returned.
        let (worker, batch) = state.withLock { $0.cancel() }
        batch?.cancel()
        worker?.cancel()
        intake.fail(CancellationError())
    }

    /// Waits for every file submitted, syncs each directory renamed into once, and returns the
    /// totals. The files are durable when it returns (unless ``Totals/unsyncedDirectories``
    /// names their directory, or their sink options did not synchronize).
    ///
    /// Cancelling the calling task cancels the engine (``cancel()``); this still waits for the
    /// files in flight to wind down, and syncs the directories of those committed.
    public func finish() async -> Totals {
        intake.finish()
        // Nothing more comes: the totals of an engine's own progress are final once its files are sized.
        if ownsProgress { tracker.totalIsComplete() }
        let worker = state.withLock { $0.worker }
        await withTaskCancellationHandler {
            await worker?.value
        } onCancel: {
            self.cancel()
        }
        let directories = directories
        // No thread is started when no directory waits (a transfer that synced its own).
        let failures = directories.isEmpty ? [:] : await Task(executorPreference: BlockingIOExecutor(label: "sluice.directory-sync")) {
            directories.synchronize()
        }.value
        let interrupted = state.withLock { $0.isCancelled }
        let last = ownsProgress ? tracker.finish(interrupted: interrupted) : tracker.latest
        return state.withLock { state in
            state.totals.unsyncedDirectories = failures
            state.totals.peakBudgetBytes = budget.peakHeld
            state.totals.progress = last
            return state.totals
        }
    }

    /// Runs the files on ``Options/width`` slots, each a task on one `BlockingIOExecutor`
    /// started here once for the engine, that takes jobs from ``intake`` itself
    /// (``serve(_:on:batch:share:)``); a file that comes back sealed joins the ``SyncBatch``.
    /// The threads end when this returns (the executors are released once their last job has
    /// run).
    private func work() async {
        let share = options.byteBudget / width
        let batch = SyncBatch(for: self)
        if state.withLock({ state in
            state.batch = batch
            return state.isCancelled
        }) {
            batch.cancel()
        }
        let jobs = BoundedChannel<Indexed>.SharedIterator(intake)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<width {
                let executor = BlockingIOExecutor(label: "sluice.many-files")
                group.addTask(executorPreference: executor) {
                    await self.serve(jobs, on: executor, batch: batch, share: share)
                }
            }
        }
        if state.withLock({ $0.isCancelled }) { batch.cancel() }
        await batch.finish()
        state.withLock { $0.batch = nil }
        // Cancelled: the jobs handed over and never started fail, in the order they were submitted.
        for item in state.withLock({ $0.takeLeftovers() }) {
            await fail(item, CancellationError())
        }
    }

    /// Fails a job whose copy never started: the sink it writes to, if any, is aborted first,
    /// so that a caller's sink is always committed or aborted.
    func fail(_ item: Indexed, _ error: any Error) async {
        if case .sink(let sink, _) = item.job.output { await sink.abort() }
        complete(Receipt(item), .failure(error), bytes: 0)
    }

    /// How `job`'s file is copied, by either route (through the pipeline, or in one step):
    /// the engine's options (a tree's own, inside the package), with its share of the budget,
    /// the holes of its sink, and `copy_file_range(2)` up to one chunk. The one place a job's
    /// settings become a copy's.
    func copyOptions(of job: Job, share: PipelineShare) -> RegularFileCopy.Options {
        var copyOptions = job.copyOptions ?? options.copy
        copyOptions.holes = writing(job).holes
        copyOptions.pipeline.capacity = share.capacity
        // The share bounds each channel's bytes; a smaller bound of the options' own is kept.
        copyOptions.pipeline.byteBudget = min(share.capacity * share.chunkSize, copyOptions.pipeline.byteBudget ?? .max)
        // A file that fits in one chunk goes by copy_file_range where one file would take the
        // pipeline: one call instead of a reader, a channel and a sink.
        copyOptions.kernelCopyLimit = max(copyOptions.kernelCopyLimit, Int64(share.chunkSize))
        return copyOptions
    }

    /// The part of the budget `job`'s file is given, out of `share` bytes: its chunk size and
    /// capacity (its own, else the engine's) fitted to it and to its size.
    func share(of job: Job, within share: Int) -> PipelineShare {
        PipelineShare(
            fileSize: job.sourceStatus.flatMap { $0.kind == .regular ? $0.size : nil }, chunkSize: job.chunkSize ?? options.chunkSize,
            capacity: (job.copyOptions ?? options.copy).pipeline.capacity, channels: job.transform == nil ? 1 : 2,
            share: share)
    }

    /// Counts and reports the end of the file `receipt` is of.
    func complete(_ receipt: Receipt, _ result: Result<Committed, any Error>, bytes: Int64) {
        state.withLock { $0.complete(result) }
        let error: String? = switch result {
        case .success: nil
        case .failure(is CancellationError): "interrupted"
        case .failure(let error): "\(error)"
        }
        let written: Int64? = if case .success(let committed) = result { committed.report.bytesWritten } else { nil }
        let snapshot = tracker.finished(index: receipt.progressIndex, file: receipt.source, bytes: bytes, written: written, error: error)
        receipt.completion(
            Outcome(index: receipt.index, source: receipt.source, destination: receipt.destination, result: result, progress: snapshot))
    }
}
