/// One regular file of a tree to copy: what `TreeCopy` hands to a ``FileJobRunner``.
///
/// The source and the destination are `FileLocation`s (a name in an open directory), which
/// keep their directories' descriptors open for as long as the job exists. ``run()`` is
/// the whole copy of the file, with the single-file guarantees (temporary file, commit point,
/// clone, kernel copy or pipeline by `RegularFileCopy`); a runner may run many at once.
package struct FileJob: Sendable {
    /// The source file: its name in its directory.
    package let source: FileLocation
    /// The destination: its name in the destination directory (which exists).
    package let destination: FileLocation
    /// What `fstatat(2)` said of the source during the walk.
    package let status: FileStatus
    /// Whether the source's name is followed if it is a symbolic link (`-L`).
    package let followsLinks: Bool
    /// The tree copy's options.
    package let options: TreeCopy.Options
    /// Where attributes that could not be kept are recorded, one warning per kind.
    package let warnings: PreservationWarnings

    /// Creates a job.
    package init(
        source: FileLocation, destination: FileLocation, status: FileStatus, followsLinks: Bool, options: TreeCopy.Options,
        warnings: PreservationWarnings
    ) {
        self.source = source
        self.destination = destination
        self.status = status
        self.followsLinks = followsLinks
        self.options = options
        self.warnings = warnings
    }

    /// Copies the file: opens the source (`O_NOFOLLOW` unless links are followed), creates the
    /// sink at the destination and runs `RegularFileCopy` to its commit; with
    /// `TreeCopy.Options.preservesAttributes`, the file gets the source's extended attributes
    /// (and so its ACLs) before the commit point where the destination accepts them
    /// (``warnings`` otherwise).
    ///
    /// - Returns: the file's report.
    /// - Throws: ``FileError`` of the source, the sink or the commit (nothing is left at the
    ///   destination then); `CancellationError` if the task was cancelled before the commit point.
    package func run() async throws -> CopyReport {
        try await run(gate: .shared)
    }

    /// The same, committing through `gate` (tests keep one of their own).
    package func run(gate: CommitGate) async throws -> CopyReport {
        let file = options.fileCopyOptions
        let chunks = try await FileChunks.open(
            at: source, followsLinks: followsLinks, chunkSize: options.chunkSize,
            findsHoles: file.findsHoles)
        let sink = try await FileSink.create(location: destination, source: chunks.status, options: options.fileSinkOptions, gate: gate, executor: nil)
        let report = try await RegularFileCopy(from: chunks, to: sink, options: file).run()
        for (kind, error) in await sink.attributeRefusals { warnings.record(kind, error) }
        return report
    }
}
