extension Copier {
    /// One source to copy (or compress, or decompress) to one destination: a file, a
    /// descriptor or any chunk sequence, to a file or any ``ChunkSink``.
    ///
    /// A file to a file takes the cheapest path (a clone, `copy_file_range(2)`, the pipeline);
    /// every other job runs the pipeline (``Pipeline``). Every job shares the copier's width,
    /// byte budget, rate, progress and options.
    public struct Job: Sendable {
        /// The source's name: its path, or the name given with a descriptor or a chunk
        /// sequence. Progress, errors and the ``Outcome`` name it. Setting it on a job that
        /// reads a file reads the file at the new path.
        public var source: Pathname {
            didSet {
                guard case .file = input.kind else { return }
                input = .file(source)
                sourceLocation = FileLocation(path: source)
            }
        }
        /// The destination's name: the final path of a file (a temporary file beside it is
        /// renamed over it), or the name given with a sink. Setting it on a job that writes a
        /// file writes the file at the new path.
        public var destination: Pathname {
            didSet {
                guard case .file = output else { return }
                output = .file(destination)
                destinationLocation = FileLocation(path: destination)
            }
        }
        /// What is read.
        package var input: Source
        /// Where it goes.
        package var output: Destination
        /// The source's status when the caller has it (an operand's `stat(2)`, a walk's
        /// `fstatat(2)`): its size sizes the file's share of the budget and counts towards the
        /// totals of progress. `nil`: the share is the largest.
        package var sourceStatus: FileStatus?
        /// How the destination is written in place of the engine's ``Options/sink``: a tree's
        /// (its own preservation), inside the package; `nil` (default): the engine's.
        package var sinkOverride: FileSink.Options?
        /// Makes the transform stage (gzip, gunzip); `nil` copies, by the cheapest path
        /// (clone, kernel copy or pipeline). With a transform, set-user-ID and set-group-ID bits are not
        /// given to the output. Checked, with `--verify`, by the copier's
        /// ``PipelineOptions/verifiesOutput`` (``Options/copy``), as the transform says.
        public var transform: TransformFactory?
        /// How this file is copied (reflink, pipeline, CRC-32, rate, verification), in place of
        /// the engine's ``Options/copy``: a tree's, inside the package; `nil` (default): the
        /// engine's. Its pipeline's capacity is the most this file's channels hold (its share
        /// of the budget may give fewer).
        package var copyOptions: FileOptions?
        /// The largest chunk of this file's pipeline, in place of the engine's
        /// ``Options/chunkSize``; `nil` (default): the engine's.
        package var chunkSize: Int?
        /// Called once when the file is done: committed (renamed into place) or failed. It runs
        /// on an engine thread and must not block.
        public var completion: @Sendable (Outcome) -> Void
        /// Where the source is opened: ``source`` as a plain path unless a walk gave a name in
        /// an open directory (`FileLocation`), which reaches any depth.
        package var sourceLocation: FileLocation
        /// Where the destination is created: ``destination`` as a plain path unless a walk gave
        /// a name in an open directory.
        package var destinationLocation: FileLocation
        /// Whether a symbolic link at ``sourceLocation`` is followed (default `true`, as for an
        /// operand); a tree's entries are opened with `O_NOFOLLOW` unless `-L`.
        package var followsLinks = true
        /// Called with the copy's own progress once the source and the destination are open,
        /// before a byte moves, on the file's thread; it must not block. The `sluice` command
        /// draws the progress of a transfer run alone from it (a subscriber made here misses
        /// nothing); the engine's own ``Copier/progress`` then counts the job when it completes,
        /// not as it goes. A job with it is never copied in one step (which has no progress).
        package var onCopyStart: (@Sendable (ProgressHub) -> Void)?
        /// Where the source's attributes that the file could not take are recorded, once per
        /// kind (a tree's record); `nil`: they are the file's own warnings.
        var preservationWarnings: PreservationWarnings?

        /// The 0.2 spelling of ``init(from:to:transform:completion:)`` with ``Source/file(_:)``
        /// and ``Destination/file(_:)``.
        @available(*, deprecated, message: "use init(from: .file(source), to: .file(destination), transform:completion:)")
        public init(
            source: Pathname, destination: Pathname, transform: TransformFactory? = nil,
            completion: @escaping @Sendable (Outcome) -> Void = { _ in }
        ) {
            self.init(source: source, destination: destination, sourceStatus: nil, transform: transform, completion: completion)
        }

        /// The same, with the source's status the caller has (an operand's `stat(2)`): the
        /// engine sizes the file's share of the budget by it and counts it in the totals.
        package init(
            source: Pathname, destination: Pathname, sourceStatus: FileStatus?,
            transform: TransformFactory? = nil,
            completion: @escaping @Sendable (Outcome) -> Void = { _ in }
        ) {
            self.source = source
            self.destination = destination
            self.input = .file(source)
            self.output = .file(destination)
            self.sourceStatus = sourceStatus
            self.transform = transform
            self.completion = completion
            self.sourceLocation = FileLocation(path: source)
            self.destinationLocation = FileLocation(path: destination)
        }

        /// Creates a job from any source to any destination.
        ///
        /// ```swift
        /// // Standard input, compressed, into a file committed atomically.
        /// let job = Copier.Job(
        ///     from: .descriptor(.standardInput, name: "-"), to: .file("in.gz"),
        ///     transform: { ParallelGzipEncoder() })
        /// ```
        ///
        /// - Parameters:
        ///   - source: a file, a descriptor or a chunk sequence.
        ///   - destination: a file or a sink.
        ///   - transform: makes the transform stage (gzip, gunzip); `nil` copies. The factory's
        ///     type is that of every ``Pipeline`` (`{ ParallelGzipEncoder() }`), whatever the
        ///     job's source and destination.
        ///   - completion: called once when the job is done, on an engine thread; must not block.
        public init(
            from source: Source, to destination: Destination,
            transform: TransformFactory? = nil,
            completion: @escaping @Sendable (Outcome) -> Void = { _ in }
        ) {
            self.init(source: source.name, destination: destination.name, sourceStatus: nil, transform: transform, completion: completion)
            self.input = source
            self.output = destination
        }

        /// Creates a job for a file found by a walk: a name in an open directory on each side.
        /// ``source`` and ``destination`` are the locations' user-visible paths.
        package init(
            source: FileLocation, destination: FileLocation, sourceStatus: FileStatus?, followsLinks: Bool,
            completion: @escaping @Sendable (Outcome) -> Void
        ) {
            self.init(source: source.path, destination: destination.path, sourceStatus: sourceStatus, completion: completion)
            self.sourceLocation = source
            self.destinationLocation = destination
            self.followsLinks = followsLinks
        }
    }
}

extension Copier.Job {
    /// Where a job's bytes come from: a file, a descriptor or any sequence of chunks.
    public struct Source: Sendable {
        /// What is read, and the name it goes by.
        package enum Kind: Sendable {
            case file(Pathname)
            case descriptor(Descriptor, name: Pathname)
            case chunks(AnyChunkSequence, name: Pathname)
        }

        /// What is read.
        package let kind: Kind

        /// A file, opened by the copier at its path (a symbolic link at it followed), as
        /// a string literal does (`Copier.Job(from: "in.img", to: "out.img")`).
        public static func file(_ path: Pathname) -> Source { Source(kind: .file(path)) }

        /// An open descriptor (standard input, a pipe, a socket, a file the caller opened), read
        /// from its offset to its end through the pipeline on a thread of its own. The caller
        /// keeps it open until the job completes, then closes it. `name` names it.
        public static func descriptor(_ descriptor: Descriptor, name: Pathname) -> Source {
            Source(kind: .descriptor(descriptor, name: name))
        }

        /// Any sequence of chunks (a ``PushBuffer``, a ``FileChunks``, one of your own), iterated
        /// once through the pipeline as it is produced; an error it throws fails the job.
        /// `name` names it.
        public static func chunks<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks, name: Pathname) -> Source
        where Chunks.Element == Chunk {
            Source(kind: .chunks(AnyChunkSequence(chunks), name: name))
        }

        /// The name the job's progress, errors and outcome give it.
        var name: Pathname {
            switch kind {
            case .file(let path): path
            case .descriptor(_, let name), .chunks(_, let name): name
            }
        }
    }

    /// Where a job's bytes go.
    public enum Destination: Sendable {
        /// A file, written to a temporary file beside its path and renamed over it at the
        /// commit point, as the copier's ``Copier/Options/sink`` says (replace, `fsync`,
        /// attributes, holes), and synced with the copier's other files.
        case file(Pathname)
        /// Any sink (a ``DescriptorSink`` on standard output, a ``FileSink`` you created, one of
        /// your own): written in order, then committed; aborted if the job fails or never
        /// starts (the copier cancelled first). It gets hole chunks (``Chunk/isHole``) where
        /// the copier's ``Copier/Options/sink`` ``FileSink/Options/holes`` finds holes in the source; the rest of
        /// those options are the sink's own business. A verification reads back a
        /// ``FileSink`` only: any other sink is committed unverified, and the report says so
        /// (``CopyReport/verification``). `name` names it.
        case sink(any ChunkSink, name: Pathname)

        /// The name the job's progress, errors and outcome give it.
        var name: Pathname {
            switch self {
            case .file(let path): path
            case .sink(_, let name): name
            }
        }
    }
}

extension Copier {
    /// How `job`'s file is written, before the engine's adjustments (``sinkOptions(of:)``): a
    /// tree's own options, else the engine's ``Options/sink``. The one place a job's
    /// override is read.
    func writing(_ job: Job) -> FileSink.Options {
        job.sinkOverride ?? options.sink
    }

    /// Whether `job` writes a durable file: such a file holds its descriptors until its
    /// batch's sync.
    func writesDurableFile(_ job: Job) -> Bool {
        job.writesFile && writing(job).synchronizes
    }
}

extension Copier.Job {
    /// Whether the job writes a file (not a sink of the caller's).
    var writesFile: Bool {
        if case .file = output { true } else { false }
    }

    /// Whether the job copies a file to a file without a transform: by the path one file would
    /// take (a clone, `copy_file_range(2)`, the pipeline).
    var copiesFileToFile: Bool {
        guard transform == nil, case .file = input.kind else { return false }
        return writesFile
    }
}

extension Copier {
    /// A file committed: renamed into place, its data synced first (unless the copier's
    /// ``Options/sink`` does not synchronize).
    public struct Committed: Sendable {
        /// The copy's report (path taken, bytes, CRC-32, warnings of the transform).
        public var report: CopyReport
        /// Conditions of the sink's commit that did not undo it.
        public var warnings: [StageWarning]
        /// Whether the file was synced and renamed over a regular destination: it is durable
        /// once its directory is synced (``Totals/unsyncedDirectories`` says which could not be).
        /// `false` for `--no-fsync` and for a destination written in place.
        package var isDurableOnceDirectorySynced: Bool
    }

    /// What became of one job.
    public struct Outcome: Sendable {
        /// The job's index: the order of ``Copier/submit(_:)`` calls, from 0.
        public var index: Int
        /// The job's source.
        public var source: Pathname
        /// The job's destination.
        public var destination: Pathname
        /// The commit, or the error that stopped the file: ``FileError``, ``GzipError``,
        /// ``VerificationError``, `CancellationError` (the engine was cancelled; nothing of it left).
        public var result: Result<Committed, any Error>
        /// The progress snapshot published when the file finished (``ProgressSnapshot/files``
        /// names it and its index), for a line per file.
        public var progress: ProgressSnapshot
    }

    /// What the engine did, once ``Copier/finish()`` returns.
    public struct Totals: Sendable {
        /// Jobs committed.
        public var committed = 0
        /// Jobs failed (cancelled ones included).
        public var failed = 0
        /// Bytes read from the sources of committed jobs.
        public var bytesRead: Int64 = 0
        /// Bytes written by committed jobs, to files and sinks.
        public var bytesWritten: Int64 = 0
        /// The most bytes the shared budget granted at once.
        package var peakBudgetBytes = 0
        /// Directories whose `fsync(2)` failed: the files renamed into them are in place but not
        /// known to be durable.
        public var unsyncedDirectories: [Pathname: FileError] = [:]
        /// The last progress snapshot: the final one (``ProgressSnapshot/isFinal``), published by
        /// ``Copier/finish()`` (for the `sluice` command's engines that share one
        /// operation's progress, the latest when the engine finished).
        package var progress: ProgressSnapshot?
    }
}

extension Copier {
    /// Copies one file and returns once it is committed (renamed into place) or failed: the
    /// job goes in as with ``submit(_:)`` (its ``Job/completion`` is called too, first), beside
    /// any other files in flight, by the same path choice, budget and batch.
    ///
    /// A file is durable once ``finish()`` has synced its directory, as every file of the
    /// copier is (a `syncfs(2)` per batch, a directory `fsync(2)` once for many files), unless
    /// the copier's ``Options/sink`` does not synchronize (`--no-fsync`: nothing is synced).
    ///
    /// ```swift
    /// let copier = Copier()
    /// let committed = try await copier.copy(.init(from: "in.img", to: "out.img"))
    /// _ = await copier.finish()
    /// print(committed.report.method)  // clone, copy_file_range or pipeline
    /// ```
    ///
    /// - Returns: the commit: the copy's report (path taken, bytes, and the CRC-32 when the
    ///   data passed through the pipeline: `nil` for a clone or `copy_file_range(2)` unless
    ///   ``FileOptions/forcesPipeline``) and its warnings.
    /// - Throws: what the file's ``Outcome/result`` holds (``FileError``, ``GzipError``,
    ///   ``VerificationError``); `CancellationError` if the copier was cancelled or finished,
    ///   or the calling task was cancelled, which cancels the copier as it does in
    ///   ``submit(_:)`` (the file, if taken, is aborted: nothing of it is left).
    public func copy(_ job: Job) async throws -> Committed {
        let delivery = OutcomeDelivery()
        var job = job
        job.completion = { [completion = job.completion] outcome in
            completion(outcome)
            delivery.deliver(outcome)
        }
        try await submit(job)
        let outcome = await withTaskCancellationHandler {
            await delivery.wait()
        } onCancel: {
            self.cancel()
        }
        return try outcome.result.get()
    }

    /// One job's outcome, handed from the thread that completes it to the task that waits.
    private final class OutcomeDelivery: Sendable {
        private let state = LockedValue<(outcome: Outcome?, waiter: CheckedContinuation<Outcome, Never>?)>((nil, nil))

        /// Resumes the waiter, or keeps `outcome` for it. Called once.
        func deliver(_ outcome: Outcome) {
            let waiter = state.withLock { state in
                state.outcome = outcome
                return state.waiter
            }
            waiter?.resume(returning: outcome)
        }

        /// Returns the outcome, at once if it was delivered already. Called once.
        func wait() async -> Outcome {
            await withCheckedContinuation { (waiter: CheckedContinuation<Outcome, Never>) in
                let delivered = state.withLock { state in
                    if state.outcome == nil { state.waiter = waiter }
                    return state.outcome
                }
                if let delivered { waiter.resume(returning: delivered) }
            }
        }
    }
}

/// A string literal is a file's path: `Copier.Job(from: "in.img", to: "out.img")`.
extension Copier.Job.Source: ExpressibleByStringLiteral {
    /// ``file(_:)`` at the path `path` spells.
    public init(stringLiteral path: String) {
        self = .file(Pathname(path))
    }
}

/// A string literal is a file's path: `Copier.Job(from: "in.img", to: "out.img")`.
extension Copier.Job.Destination: ExpressibleByStringLiteral {
    /// ``file(_:)`` at the path `path` spells.
    public init(stringLiteral path: String) {
        self = .file(Pathname(path))
    }
}
