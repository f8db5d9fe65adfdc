extension Copier {
    /// Which symbolic links a tree copy follows, as `cp`'s `-P`, `-H` and `-L`
    /// (``TreeOptions/links``).
    public enum SymbolicLinkPolicy: Sendable, Hashable {
        /// None: every link is an entry of its own (`-P`, the default of `cp -r`).
        case never
        /// The root only, when it is a link (`-H`).
        case root
        /// All: a link is walked as what it leads to (`-L`); a link back to a directory being
        /// walked is reported as a cycle, never followed (as a bind mount back to one is,
        /// whatever the policy).
        case all
    }

    /// What a tree copy follows and keeps beyond its files, with `cp -R`'s meanings (`-a`, `-P`,
    /// `-H`, `-L`): only a tree has links to follow and hard links to keep. How its entries are
    /// written (replace, `fsync`, `--preserve` for every entry, directories and links too) is
    /// the copier's ``Options/sink``, and how its regular files are copied the copier's
    /// ``Options``, as for every file of the copier.
    public struct TreeOptions: Sendable, Hashable {
        /// Keep hard links within the tree as hard links (`-a`). Default `false`: each name
        /// becomes a file of its own, as `cp -r`.
        public var keepsHardLinks: Bool
        /// Which symbolic links are followed: none (`-P`, default), the root (`-H`), all (`-L`).
        public var links: Copier.SymbolicLinkPolicy
        /// The most directory descriptors each side of the walk keeps open (at least 2): the
        /// process's share, ``defaultMaximumOpenDirectories``, unless a test sets fewer.
        package var maximumOpenDirectories: Int

        /// The process's share of directory descriptors for each side of a walk: 32 under the
        /// usual `ulimit -n` 1,024, fewer under a lower limit (read once, at the first use).
        package static var defaultMaximumOpenDirectories: Int { DescriptorBudget.current.directoriesPerSide }

        /// Creates options; the defaults are `cp -r`'s.
        public init(keepsHardLinks: Bool = false, links: Copier.SymbolicLinkPolicy = .never) {
            self.keepsHardLinks = keepsHardLinks
            self.links = links
            self.maximumOpenDirectories = Self.defaultMaximumOpenDirectories
        }
    }

    /// What a tree copy did, for its caller's summary and exit status: the entries of each kind
    /// made, the bytes, the entries that failed and the attributes that could not be kept.
    public struct TreeReport: Sendable {
        /// Regular files committed.
        public var files = 0
        /// Directories created (or merged into).
        public var directories = 0
        /// Symbolic links created.
        public var symbolicLinks = 0
        /// Hard links made to a file copied earlier in the run.
        public var hardLinks = 0
        /// FIFOs, devices and sockets created.
        public var specialFiles = 0
        /// Bytes of regular files read.
        public var bytes: Int64 = 0
        /// The count of entries that failed (each was reported to `onFailure`).
        public var failures = 0
        /// The attributes not kept, one message per kind, and other warnings of files.
        public var warnings: [String] = []
        /// Regular files of the tree that the copier's cancellation stopped (neither copied nor
        /// failed): ``Copier/copyTree(from:to:options:onOutcome:onFailure:)`` then throws.
        var cancelled = 0
        /// Creates an empty report.
        package init() {}
    }

    /// Copies a directory tree (or any single file) with `cp -R`'s meanings, its regular files
    /// through this copier beside any others in flight: the same width, byte budget, path
    /// choice, sync batch and ``progress`` (whose totals grow while the walk finds files).
    ///
    /// The destination is where `cp -R source destination` puts the copy: inside an existing
    /// directory under the source's name, else the destination itself. Entries are copied as
    /// they are: a directory is created (owner-writable first), a regular file is a job of this
    /// copier (temporary file, commit point, clone or kernel copy), a symbolic link is
    /// recreated with its target as bytes (never followed inside the tree, unless
    /// ``Copier/SymbolicLinkPolicy/all``), a FIFO, a device or a socket is recreated with
    /// `mknodat(2)` (never read). Hard links within the tree stay hard links with
    /// ``TreeOptions/keepsHardLinks``. Directory attributes are applied after everything
    /// inside them, deepest first, once the tree's own files are committed, so read-only
    /// directories copy and their times are kept. Everything happens relative to directory
    /// descriptors: depth is not bounded by `PATH_MAX`. A directory copied into itself, and a
    /// directory met again below itself (a bind mount, a followed link), is refused, never
    /// entered.
    ///
    /// The files are durable, as every file of the copier, once ``finish()`` has synced the
    /// directories they were renamed into (<doc:DurabilityOfManyFiles>).
    ///
    /// Concurrency contract: calls may run at once with each other, with ``submit(_:)`` and with
    /// ``copy(_:)``, all before ``finish()``; the walk's system calls run on a thread of its own,
    /// never on the cooperative pool.
    ///
    /// ```swift
    /// let copier = Copier(options: .init(sink: .init(preservesAttributes: true)))
    /// let report = try await copier.copyTree(from: "photos", to: "backup/", options: .init(keepsHardLinks: true))
    /// let totals = await copier.finish()
    /// print(report.files, totals.unsyncedDirectories.isEmpty)
    /// ```
    ///
    /// - Parameters:
    ///   - source: a directory or a file.
    ///   - destination: an existing directory (the copy goes inside it, under the source's
    ///     name), or the path the copy is created at.
    ///   - options: which links are followed and whether hard links are kept; how every entry
    ///     is written (replace, `fsync`, attributes kept) is the copier's ``Options/sink``.
    ///   - onOutcome: called with each regular file's outcome as it ends, on an engine thread;
    ///     it must not block.
    ///   - onFailure: called with each entry that failed (its path in the error), in the order
    ///     seen; the copy goes on.
    /// - Returns: the counts, the failures and the warnings, once every entry is done.
    /// - Throws: `CancellationError` when the task was cancelled (which cancels the copier, as
    ///   ``copy(_:)`` does: files committed stay, files in flight leave nothing), or the copier
    ///   was (``cancel()``) before every file of the tree was copied; ``FileError``
    ///   when nothing could be copied: the source cannot be read, the target's directory cannot
    ///   be opened, or the target is inside the source (code ``FileError/Code/unsupported``).
    public func copyTree(
        from source: Pathname, to destination: Pathname, options: TreeOptions = TreeOptions(),
        onOutcome: @escaping @Sendable (Outcome) -> Void = { _ in },
        onFailure: @escaping @Sendable (any Error) -> Void = { _ in }
    ) async throws -> TreeReport {
        try await copyTree(
            from: source, to: destination, options: options, completesTotal: false, onOutcome: onOutcome, onFailure: onFailure)
    }

    /// The same; `completesTotal`: whether the end of this tree's walk completes the totals of
    /// the copier's progress (the last tree of a command whose totals grow while it walks), so
    /// the progress has a fraction while the tree's last files are copied. `beforeFinalPass`
    /// (the seam for tests) runs once every file of the tree has completed, before the
    /// directories get their attributes.
    package func copyTree(
        from source: Pathname, to destination: Pathname, options: TreeOptions, completesTotal: Bool,
        onOutcome: @escaping @Sendable (Outcome) -> Void, onFailure: @escaping @Sendable (any Error) -> Void,
        beforeFinalPass: (@Sendable () -> Void)? = nil
    ) async throws -> TreeReport {
        // The walk's and the directories' system calls: on a thread of the tree's own.
        try await withTaskExecutorPreference(BlockingIOExecutor(label: "sluice.tree-copy")) {
            let run = try TreeCopyRun(
                copier: self, source: source, destination: destination, tree: options, onOutcome: onOutcome, onFailure: onFailure)
            // A cancelled task cancels this copier, as copy(_:) does: the walk stops (woken where
            // it waits for descriptors), and the files in flight end at once, nothing of them left.
            try await withTaskCancellationHandler {
                // However the walk ended, the files handed over wind down (or finish) first.
                defer {
                    if completesTotal { self.totalIsComplete() }
                    run.waitForJobs()
                }
                try await run.walk()
            } onCancel: {
                self.cancel()
            }
            try Task.checkCancellation()
            // The copier was cancelled by another task: some of the tree's files were never copied.
            if run.shared.withLock({ $0.tally.cancelled }) > 0 { throw CancellationError() }
            beforeFinalPass?()
            run.finish()
            return run.report()
        }
    }

    /// Where `cp -R source destination` puts the copy: `destination/<source's last component>`
    /// when `destination` is an existing directory (symbolic links followed), else `destination`.
    package static func treeTarget(source: Pathname, destination: Pathname) -> Pathname {
        if (try? FileStatus.of(destination))?.kind == .directory { return destination.appending(source.lastComponent) }
        return destination
    }
}
