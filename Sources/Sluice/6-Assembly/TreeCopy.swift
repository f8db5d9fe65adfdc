#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A copy of a directory tree with `cp -R`'s meanings: `copy -r`, `-a` and `--preserve`.
///
/// The source may be a directory or any single file. The destination is
/// ``target(source:destination:)``: inside an existing directory under the source's name, else
/// the destination itself. Entries are copied as they are: a directory is created (owner-
/// writable first: `0700 | mode`), a regular file goes to the copy's ``Copier`` engine, up
/// to ``Options/width`` files at once (each file with the single-file guarantees: temporary
/// file, commit point, clone or kernel copy), a symbolic
/// link is recreated with its target as bytes (never followed inside the tree, unless
/// ``SymbolicLinkPolicy/all``), a FIFO, a device or a socket is recreated with `mknodat(2)`
/// (never read). Hard links within the tree stay hard links with
/// ``Options/keepsHardLinks``. Directory attributes are applied after everything inside
/// them, deepest first, so read-only directories copy and their times are kept.
///
/// Everything happens relative to directory descriptors (`TreeWalker`, `DirectoryStack`):
/// depth is not bounded by `PATH_MAX`, and open descriptors are bounded by
/// ``Options/maximumOpenDirectories`` on each side (plus those the files in flight hold).
///
/// An entry that fails is reported through `onFailure` with its path, and the copy goes on;
/// a directory copied into itself is refused before anything is created. During the walk, a
/// directory of the source that is one of the copy's (made or merged into), one of the
/// target's parents, or one of the directories that contain it (a bind mount or a followed
/// link makes a tree a graph) is not entered: it is reported as that entry's failure
/// (`FileError.copyIntoItself(source:destination:file:line:)`,
/// `FileError.directoryCycle(_:ancestor:file:line:)`), so a copy never recurses without end.
///
/// Concurrency contract: ``run(onFailure:)`` may be called once per value, from any task; its
/// system calls run on a `BlockingIOExecutor` of its own. Cancelling the task stops the walk:
/// files committed stay, files in flight leave nothing (their sinks abort), directories keep
/// their provisional modes.
public struct TreeCopy: Sendable {
    /// What a tree copy keeps and follows.
    public struct Options: Sendable {
        /// `--preserve`: permission bits, access and modification times (nanoseconds), owner
        /// and group where permitted, extended attributes and ACLs, for every entry; refusals
        /// are one warning per kind (``TreeCopyReport/warnings``). Default `false`: new entries get
        /// the source's permission bits narrowed by the umask, as `cp -r` gives them.
        public var preservesAttributes: Bool
        /// Keep hard links within the tree as hard links (`-a`). Default `false`: each name
        /// becomes a file of its own, as `cp -r`.
        public var keepsHardLinks: Bool
        /// Which symbolic links are followed: none (`-P`, default), the root (`-H`), all (`-L`).
        public var links: SymbolicLinkPolicy
        /// How regular files are committed (overwrite, fsync); its `preservesAttributes` is
        /// set from ``preservesAttributes`` and its `sparse` from `file.sparse`.
        public var sink: FileSink.Options
        /// How each regular file is copied: reflink, holes, a forced pipeline, the pipeline's
        /// capacity, CRC-32, rate limit and verification, slice size, kernel-copy limit (the
        /// capacity fitted to ``byteBudget``).
        public var file: RegularFileCopy.Options
        /// The chunk size of files copied through the pipeline, in bytes.
        public var chunkSize: Int
        /// The most regular files copied at once (`--jobs`), within the process's limit on open
        /// files. Default ``Copier/Options/defaultWidth``.
        public var width: Int
        /// The most bytes the channels of the files in flight hold at once, in bytes. Default
        /// 32 MiB.
        public var byteBudget: Int
        /// The most directory descriptors each side of the walk keeps open (at least 2).
        /// Default ``defaultMaximumOpenDirectories``.
        public var maximumOpenDirectories: Int

        /// The process's share of directory descriptors for each side of a walk: 32 under the
        /// usual `ulimit -n` 1,024, fewer under a lower limit (read once, at the first use).
        public static var defaultMaximumOpenDirectories: Int { DescriptorBudget.current.directoriesPerSide }

        /// Creates options; the defaults are `cp -r`'s.
        ///
        /// - Precondition: `width` and `byteBudget` >= 1.
        public init(
            preservesAttributes: Bool = false, keepsHardLinks: Bool = false, links: SymbolicLinkPolicy = .never,
            sink: FileSink.Options = .init(), file: RegularFileCopy.Options = .init(),
            chunkSize: Int = FileChunks.defaultChunkSize,
            maximumOpenDirectories: Int = Options.defaultMaximumOpenDirectories,
            width: Int = Copier.Options.defaultWidth, byteBudget: Int = Copier.Options().byteBudget
        ) {
            precondition(width >= 1 && byteBudget >= 1, "width and byteBudget must be at least 1")
            self.width = width
            self.byteBudget = byteBudget
            self.preservesAttributes = preservesAttributes
            self.keepsHardLinks = keepsHardLinks
            self.links = links
            self.sink = sink
            self.file = file
            self.chunkSize = chunkSize
            self.maximumOpenDirectories = maximumOpenDirectories
        }

        /// The sink options of each regular file: ``sink`` with ``preservesAttributes`` and
        /// `file.sparse`.
        var fileSinkOptions: FileSink.Options {
            var options = sink
            options.preservesAttributes = preservesAttributes
            options.preservesExtendedAttributes = preservesAttributes
            options.sparse = file.sparse
            return options
        }
    }

    /// The tree (or single file) copied, as given.
    public let source: Pathname
    /// Where it goes: ``target(source:destination:)`` of the destination given.
    public let target: Pathname
    /// What is kept and followed.
    public let options: Options
    /// The operation's progress: bytes and files done of totals that grow while the walk
    /// finds files (each snapshot's ``ProgressSnapshot/files``). Subscribe before
    /// ``run(onFailure:)``. It ends when the run returns (the `sluice` command's copies of
    /// several trees share one, which it ends after the last).
    public let progress: ProgressHub
    /// Makes what copies the regular files, when the copy runs: nothing is started before.
    let makeRunner: @Sendable () -> any FileJobRunner
    /// The system calls of the walk's and the copy's directories (the seam for tests; the
    /// files' own calls are the runner's): real by default.
    var system: SystemCalls = .live

    /// Assembles a tree copy.
    ///
    /// - Parameters:
    ///   - source: a directory or a file.
    ///   - destination: an existing directory (the copy goes inside it, under the source's
    ///     name), or the path the copy is created at.
    ///   - options: what is kept and followed, and how many files are copied at once.
    ///   - onOutcome: called with each regular file's outcome (its index, paths, result and
    ///     the progress snapshot about it, for a line per file) as it ends, on an engine
    ///     thread; it must not block.
    public init(
        from source: Pathname, to destination: Pathname, options: Options = Options(),
        onOutcome: @escaping @Sendable (Copier.Outcome) -> Void = { _ in }
    ) {
        self.init(from: source, to: destination, options: options, progress: nil, completesTotal: true, onOutcome: onOutcome)
    }

    /// The same, reporting to `progress`: the operation's progress, shared with other copies
    /// (several trees of one command; created with `isTotalGrowing`; its owner finishes it);
    /// `nil`: the copy's own, finished when ``run(onFailure:)`` returns. `completesTotal`:
    /// whether this tree's walk completes the totals of a shared `progress` (the last tree of
    /// the operation); an own progress is always completed.
    package init(
        from source: Pathname, to destination: Pathname, options: Options = Options(),
        progress: ManyFilesProgress?, completesTotal: Bool = false,
        onOutcome: @escaping @Sendable (Copier.Outcome) -> Void = { _ in }
    ) {
        let tracker = progress ?? ManyFilesProgress(isTotalGrowing: true)
        let ownsProgress = progress == nil
        self.init(from: source, to: destination, options: options, progress: tracker.hub) {
            ManyFileJobRunner(
                options: .init(width: options.width, byteBudget: options.byteBudget), progress: tracker,
                ownsProgress: ownsProgress, completesTotal: completesTotal || ownsProgress, system: .live, onOutcome: onOutcome)
        }
    }

    /// The same, with the regular files copied by `runner` (the seam for tests: one at a
    /// time, an engine with other system calls). ``progress`` is the runner's engine's; a
    /// runner without one (one at a time) publishes none, so nothing should subscribe.
    package init(from source: Pathname, to destination: Pathname, options: Options = Options(), runner: any FileJobRunner) {
        self.init(from: source, to: destination, options: options, progress: runner.progress?.hub ?? ProgressHub()) { runner }
    }

    private init(
        from source: Pathname, to destination: Pathname, options: Options, progress: ProgressHub,
        makeRunner: @escaping @Sendable () -> any FileJobRunner
    ) {
        self.source = source
        self.target = Self.target(source: source, destination: destination)
        self.options = options
        self.progress = progress
        self.makeRunner = makeRunner
    }

    /// Where `cp -R source destination` puts the copy: `destination/<source's last component>`
    /// when `destination` is an existing directory (symbolic links followed), else `destination`.
    public static func target(source: Pathname, destination: Pathname) -> Pathname {
        if (try? FileStatus.of(destination))?.kind == .directory { return destination.appending(source.lastComponent) }
        return destination
    }

    /// Copies the tree.
    ///
    /// - Parameter onFailure: called with each entry that failed (its path in the error), in
    ///   the order seen, from the copy's thread or an engine thread.
    /// - Returns: the counts, the failures and the warnings.
    /// - Throws: `CancellationError` when the task was cancelled; ``FileError`` when nothing
    ///   could be copied: the source cannot be read, the target's directory cannot be opened,
    ///   or the target is inside the source (`FileError.copyIntoItself(source:destination:file:line:)`).
    public func run(onFailure: @escaping @Sendable (any Error) -> Void = { _ in }) async throws -> TreeCopyReport {
        let executor = BlockingIOExecutor(label: "sluice.tree-copy")
        let runner = makeRunner()
        return try await withTaskExecutorPreference(executor) {
            let run: TreeCopyRun
            do {
                run = try TreeCopyRun(copy: self, runner: runner, onFailure: onFailure)
                try await run.walk()
            } catch {
                await runner.waitForAll()  // the files handed over wind down (or finish) first
                throw error
            }
            await runner.waitForAll()
            try Task.checkCancellation()
            run.finish()
            var report = run.report()
            report.unsyncedDirectories = runner.totals?.unsyncedDirectories ?? [:]
            return report
        }
    }
}
