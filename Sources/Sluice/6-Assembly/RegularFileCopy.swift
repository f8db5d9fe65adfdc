/// A copy of a file to a ``FileSink`` by the cheapest path the file systems allow: a clone,
/// a copy inside the kernel, or reads and writes. Every path runs through Sluice's one
/// pipeline (``Pipeline``): a clone or a kernel copy as ranges of the source that the sink copies
/// inside the kernel (``SourceRanges``, ``SourceRangeSink``).
///
/// The paths, in order, are the one plan's (`CopyPlan`: the table, by the file systems' types
/// and the source's kind, never by probing; the pipeline alone for a rate limit); a path the
/// kernel refuses gives way to the next, the temporary file emptied first.
///
/// Every path keeps the guarantees of the sink and of ``Pipeline``, applied by the pipeline once
/// for all of them: the data goes to a temporary file that ``FileSink/commit()`` syncs (unless
/// asked not to) and renames into place at the commit point, a same-file destination was
/// refused when the sink was made, progress reaches ``progress`` (a clone in one step, a kernel
/// copy after every `copy_file_range(2)`), a cancellation is seen between slices and aborts the
/// sink. ``CopyReport/method`` names the path taken, and
/// ``CopyReport/crc32`` is `nil` unless the data passed through the pipeline or was verified (a
/// clone shares the source's extents and is not read back:
/// ``CopyReport/VerificationOutcome/sharedExtents``).
///
/// ```swift
/// let source = try await FileChunks.open("in.img")
/// let sink = try await FileSink.create(at: "out.img", source: source.status)
/// let report = try await RegularFileCopy(from: source, to: sink).run()
/// print(report.method)  // clone, copy_file_range or pipeline
/// ```
///
/// Concurrency contract: ``run()`` may be called once, from any task; the source must not have
/// been read. Cancelling that task stops the copy between two slices (a clone is one short
/// call), aborts the sink and throws `CancellationError`.
package struct RegularFileCopy: Sendable {
    /// What the copy may do: ``Copier/FileOptions``.
    package typealias Options = Copier.FileOptions

    let source: FileChunks
    let sink: FileSink
    let options: Options
    let sealing: SealedFileSlot?

    /// The copy's progress: subscribe before calling ``run()``. Its last snapshot comes after
    /// the sink committed (or failed); then every subscriber's stream ends. After a kernel copy
    /// that gave way half-way (rare: the kernel refuses at the first call), the pipeline's
    /// snapshots start again from 0.
    package let progress = ProgressHub()

    /// Assembles a copy.
    ///
    /// - Parameters:
    ///   - source: the file, opened by path and not yet read (``FileChunks/open(_:chunkSize:findsHoles:)``).
    ///     A descriptor the caller gave (``FileChunks/reading(_:path:chunkSize:findsHoles:)``) is copied by
    ///     the pipeline from its offset.
    ///   - sink: the destination; committed only if the copy succeeds.
    ///   - options: reflink, holes, the pipeline's sizes.
    ///   - sealing: where the copy leaves the sink's file sealed instead of committing it
    ///     (`Pipeline.sealing(into:)`); `nil`: committed.
    init(from source: FileChunks, to sink: FileSink, options: Options = Options(), sealingInto sealing: SealedFileSlot? = nil) {
        self.source = source
        self.sink = sink
        self.options = options
        self.sealing = sealing
    }

    /// Runs the copy to the end.
    ///
    /// - Returns: the ``CopyReport`` once the sink has committed, with the path taken.
    /// - Throws: ``FileError``: of the source, the sink or the commit; with ``Copier/ReflinkMode/always``
    ///   where no clone is possible, code ``FileError/Code/unsupported``, operation
    ///   `FICLONE` (the kernel's errno when it refused). `CancellationError`
    ///   when the calling task was cancelled. The sink is aborted first: nothing is left.
    package func run() async throws -> CopyReport {
        let start = ContinuousClock.now
        if sink.options.preservesAttributes, let descriptor = source.kernelCopySource {
            // `cp -p` keeps the source's ACL (`cp -a` its extended attributes), read by its descriptor.
            await sink.preserveAttributes(of: descriptor, at: source.path)
        }
        do {
            let plan = try await CopyPlan.make(
                options: options, source: source.status, descriptor: source.kernelCopySource, sourcePath: source.path,
                sourceSystem: source.system, distrustsHoleMap: source.reader.distrustsHoleMap, sink: sink)
            var (report, method, refusals) = try await plan.run(attempt, emptyingDestination: { try await sink.discardContents() })
            report.method = method
            report.refusals = refusals
            return report
        } catch {
            // No method ran, or all were refused; a pipeline that failed did both already (idempotent).
            await sink.abort()
            ProgressRecorder(hub: progress, totalBytes: source.expectedSize, start: start, statistics: { (0, 0, .zero) })
                .finish(succeeded: false)
            throw error
        }
    }

    /// Copies by `method` and commits the sink: every method through the one pipeline
    /// (``Pipeline``), the kernel's as ranges of the source that the sink copies
    /// (``SourceRanges``), so progress, cancellation, the check and the commit are the same.
    ///
    /// - Throws: ``KernelCopyRefusal`` when the kernel refused a clone or a `copy_file_range(2)`
    ///   (the sink still open, the progress going); anything else once the sink is aborted.
    private func attempt(_ method: CopyMethod) async throws -> CopyReport {
        switch method {
        case .clone, .kernelCopy:
            let ranges = SourceRanges(
                of: source, method: method == .clone ? .clone : .kernelCopy, sliceSize: options.sliceSize,
                findsHoles: options.holes != .never)
            return try await Pipeline(ranges: ranges, to: sink, options: options.pipeline, progress: progress)
                .sealing(into: sealing).run()
        case .pipeline:
            if source.readsHolesAsData { await sink.findHolesInZeroBlocks() }
            return try await Pipeline(
                from: source, to: sink, totalBytes: source.expectedSize, options: options.pipeline, transform: nil,
                progress: progress
            ).sealing(into: sealing).run()
        }
    }
}
