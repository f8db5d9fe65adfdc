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
/// ``Copier/SymbolicLinkPolicy/all``), a FIFO, a device or a socket is recreated with `mknodat(2)`
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
package struct TreeCopy: Sendable {
    /// What a tree copy keeps and follows (``Copier/TreeOptions``), and how its regular files
    /// are copied (the engine's options, which ``Copier/copyTree(from:to:options:onOutcome:onFailure:)``
    /// takes from its copier).
    package struct Options: Sendable {
        /// What is followed, and hard links kept.
        package var tree: Copier.TreeOptions
        /// How every entry is written: replace, `fsync`, attributes kept (the copier's
        /// ``Copier/Options/sink``).
        package var sink: FileSink.Options
        /// How each regular file is copied: reflink, holes, a forced pipeline, the pipeline's
        /// capacity, CRC-32, rate limit and verification, slice size, kernel-copy limit (the
        /// capacity fitted to ``byteBudget``).
        package var file: Copier.FileOptions
        /// The chunk size of files copied through the pipeline, in bytes.
        package var chunkSize: Int
        /// The most regular files copied at once (`--jobs`), within the process's limit on open
        /// files. Default ``Copier/Options/defaultWidth``.
        package var width: Int
        /// The most bytes the channels of the files in flight hold at once, in bytes. Default
        /// 32 MiB.
        package var byteBudget: Int

        /// Creates options; the defaults are `cp -r`'s.
        ///
        /// - Precondition: `width` and `byteBudget` >= 1.
        package init(
            preservesAttributes: Bool? = nil, keepsHardLinks: Bool = false, links: Copier.SymbolicLinkPolicy = .never,
            sink: FileSink.Options = .init(), file: Copier.FileOptions = .init(),
            chunkSize: Int = FileChunks.defaultChunkSize,
            maximumOpenDirectories: Int = Copier.TreeOptions.defaultMaximumOpenDirectories,
            width: Int = Copier.Options.defaultWidth, byteBudget: Int = Copier.Options().byteBudget
        ) {
            precondition(maximumOpenDirectories >= 2, "a walk needs at least 2 directory descriptors")
            var tree = Copier.TreeOptions(keepsHardLinks: keepsHardLinks, links: links)
            tree.maximumOpenDirectories = maximumOpenDirectories
            var sink = sink
            sink.preservesAttributes = preservesAttributes ?? sink.preservesAttributes
            self.init(tree: tree, sink: sink, file: file, chunkSize: chunkSize, width: width, byteBudget: byteBudget)
        }

        /// Creates options from a tree's and an engine's.
        ///
        /// - Precondition: `width` and `byteBudget` >= 1.
        package init(
            tree: Copier.TreeOptions, sink: FileSink.Options, file: Copier.FileOptions, chunkSize: Int, width: Int, byteBudget: Int
        ) {
            precondition(width >= 1 && byteBudget >= 1, "width and byteBudget must be at least 1")
            self.tree = tree
            self.sink = sink
            self.file = file
            self.chunkSize = chunkSize
            self.width = width
            self.byteBudget = byteBudget
        }

        /// The sink options of each regular file: ``sink``, with the extended attributes too
        /// when it preserves attributes (as `cp -a`).
        var fileSinkOptions: FileSink.Options {
            var options = sink
            options.preservesExtendedAttributes = sink.preservesAttributes
            return options
        }

        /// The copy options of each regular file: ``file``, with the holes of ``sink``, so the
        /// reader and the sink agree.
        var fileCopyOptions: Copier.FileOptions {
            var options = file
            options.holes = sink.sparse
            return options
        }
    }

    /// The tree (or single file) copied, as given.
    package let source: Pathname
    /// Where it goes: ``target(source:destination:)`` of the destination given.
    package let target: Pathname
    /// What is kept and followed.
    package let options: Options
    /// The operation's progress: bytes and files done of totals that grow while the walk
    /// finds files (each snapshot's ``ProgressSnapshot/files``). Subscribe before
    /// ``run(onFailure:)``. It ends when the run returns (for a runner's engine, when its
    /// owner finishes it).
    package let progress: ProgressHub
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
    package init(
        from source: Pathname, to destination: Pathname, options: Options = Options(),
        onOutcome: @escaping @Sendable (Copier.Outcome) -> Void = { _ in }
    ) {
        // Its own progress, made now (subscribers register before the run) and finished by its
        // engine, whose walk completes the totals.
        let tracker = ManyFilesProgress(isTotalGrowing: true)
        self.init(from: source, to: destination, options: options, progress: tracker.hub) {
            ManyFileJobRunner(
                options: .init(width: options.width, byteBudget: options.byteBudget), progress: tracker,
                ownsProgress: true, system: .live, onOutcome: onOutcome)
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
    package static func target(source: Pathname, destination: Pathname) -> Pathname {
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
    package func run(onFailure: @escaping @Sendable (any Error) -> Void = { _ in }) async throws -> Copier.TreeReport {
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
