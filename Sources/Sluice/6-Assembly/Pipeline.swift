/// A copy from any asynchronous sequence of chunks to any ``ChunkSink``, with lossless
/// backpressure, an optional transform stage, and progress.
///
/// The pipeline, each stage its own task:
/// ```
/// source ──► [BoundedChannel] ──► (transform) ──► [BoundedChannel] ──► sink
/// ```
/// The reading stage pulls a chunk from the source only when there is room in the channel, so
/// the slowest stage sets the pace and the memory held is at most `capacity` chunks per channel
/// plus one chunk in each stage, whatever the size of the data. Nothing is dropped, duplicated
/// or reordered. The transform stage (gzip, gunzip) runs on a dedicated thread.
///
/// Two options change the pipeline's course (<doc:PacingAndVerification>): a rate limit
/// (``PipelineOptions/rateLimit``) paces the stage after the first channel, so the reading
/// stage waits on that channel's backpressure; a verification
/// (``PipelineOptions/verifiesOutput``) reads the output back between the last write and the
/// commit, as its transform says (``VerifiableTransform``), and aborts on a difference.
///
/// Create the copy, subscribe to ``progress`` (before `run()`, so no snapshot is missed), then
/// call ``run()``:
/// ```swift
/// let source = try await FileChunks.open("in.bin")
/// let sink = try await FileSink.create(at: "out.bin", source: source)
/// let copy = Pipeline(from: source, to: sink, totalBytes: source.expectedSize)
/// let updates = copy.progress.subscribe()
/// Task { for await snapshot in updates { print(snapshot.fraction ?? 0) } }
/// let report = try await copy.run()
/// ```
///
/// A ``Pipeline`` always runs this pipeline (``CopyReport/method`` is ``CopyMethod/pipeline``), so
/// `sluice bench` measures the channel whatever the file system. A regular file copied to a
/// ``FileSink`` with no transform may go by a cheaper path: a ``Copier`` picks it (a clone,
/// `copy_file_range(2)`) and falls back to this pipeline.
///
/// Concurrency contract: ``run()`` may be called once, from any task. Cancelling that task
/// cancels every stage (a read waiting on an idle pipe included), aborts the sink (a file
/// destination stays untouched, its temporary file removed) and throws `CancellationError`.
/// The first real error wins: when the sink fails with `EFBIG`, `run()` throws that
/// ``FileError``, not the cancellation it caused in the other stages.
public struct Pipeline<Source: AsyncSequence & Sendable, Sink: ChunkSink>: Sendable where Source.Element == Chunk {
    /// The 0.2 spelling of the top-level ``Sluice/TransformFactory``.
    @available(*, deprecated, renamed: "Sluice.TransformFactory")
    public typealias TransformFactory = Sluice.TransformFactory

    let source: Source
    let sink: Sink
    let totalBytes: Int64?
    let options: PipelineOptions
    let makeTransform: Sluice.TransformFactory?
    /// The source as a file, when the copy was made with one (the initializers for
    /// ``FileChunks``): its reads run on its reader's thread, a regular file's channel wakes the
    /// writer once half full, and a verification reads the file again.
    let file: FileChunks?
    /// The thread of the reading stage: the file's reader's. For ranges of a source
    /// (``SourceRanges``), whose reading makes at most an `lseek(2)` per extent, the sink's: the
    /// two stages then take turns on one thread, with no hand-off per slice.
    var readExecutor: (any TaskExecutor)? {
        Source.self == SourceRanges.self ? sink.preferredExecutor ?? file?.preferredExecutor : file?.preferredExecutor
    }
    /// For tests: called in each stage at every ``AwaitPoint``, so that a test can cancel the
    /// run at exactly one of them. `nil` (no cost but a check per `await`) outside tests.
    var awaitPointHook: AwaitPointHook?
    /// Where the copy leaves its file sealed, not committed (``sealing(into:)``); `nil`: the
    /// sink's commit.
    private(set) var sealing: SealedFileSlot?

    /// The copy's progress: subscribe before calling ``run()``. Its last snapshot comes after the
    /// sink committed (or failed), and then every subscriber's stream ends.
    public let progress: ProgressHub

    /// Assembles a copy.
    ///
    /// - Parameters:
    ///   - source: the chunks to copy, pulled one at a time (a ``PushBuffer``, any
    ///     `AsyncSequence` of ``Chunk``). A source whose static type is ``FileChunks`` gets the
    ///     initializer for files, with its reads on the file's thread and a verification that
    ///     reads the file again; through this one (in code generic over the source) it is a
    ///     sequence like any other.
    ///   - sink: where they go; committed only if every stage succeeds.
    ///   - totalBytes: the source's size in bytes when known, for progress; `nil` otherwise.
    ///   - options: channel capacity and byte budget, CRC-32.
    ///   - transform: makes a transform stage (``ParallelGzipEncoder``, ``GzipDecoder``); `nil`
    ///     copies. A verification asks the transform how to check its output
    ///     (``VerifiableTransform``).
    public init(
        from source: Source, to sink: Sink, totalBytes: Int64?, options: PipelineOptions = PipelineOptions(),
        transform: Sluice.TransformFactory? = nil
    ) {
        self.init(
            from: source, to: sink, totalBytes: totalBytes, options: options, transform: transform, progress: ProgressHub(),
            file: nil)
    }

    /// The same, publishing to `progress`, with the source as a file when it is one.
    private init(
        from source: Source, to sink: Sink, totalBytes: Int64?, options: PipelineOptions, transform: Sluice.TransformFactory?,
        progress: ProgressHub, file: FileChunks?
    ) {
        self.progress = progress
        self.source = source
        self.sink = sink
        self.totalBytes = totalBytes
        self.options = options
        self.makeTransform = transform
        self.file = file
    }

    /// The same copy ending with `slot`'s seal (``FileSink/seal()``: the data and attributes
    /// complete, not renamed) where it would commit the sink, the sealed file left in `slot` for
    /// the caller (a ``Copier``'s sync batch); with `nil`, ending with the commit.
    func sealing(into slot: SealedFileSlot?) -> Self {
        var copy = self
        copy.sealing = slot
        return copy
    }

    enum StageResult: Sendable {
        /// The reading stage's bytes and CRC-32 (`nil` when not computed, or when the sink copied
        /// ranges of the source, `kernel` their method, which the data never passed through).
        case read(bytes: Int64, crc32: UInt32?, kernel: Chunk.SourceRange.Method?)
        /// The transform's summary, and how to check its output when it says
        /// (``VerifiableTransform``).
        case transformed(TransformSummary, verification: TransformVerification?)
        case written
    }

    /// Runs the copy to the end.
    ///
    /// - Returns: the ``CopyReport`` once the sink has committed (for a file: data and directory
    ///   synced, renamed into place).
    /// - Throws: the first real error of any stage: the source's (``FileError`` for reads), the
    ///   transform's (``GzipError``), the sink's (``FileError``: `EFBIG`, `ENOSPC`, ...), or the
    ///   commit's; `CancellationError` when the calling task was cancelled. The sink is aborted
    ///   first.
    public func run() async throws -> CopyReport {
        let start = ContinuousClock.now
        // A test that cancels at each await point in turn needs the same points in every run:
        // with a hook, chunks go one at a time (no batches, no deferred wake-up).
        let batches = awaitPointHook == nil
        let (input, output) = makeChannels(wakingAtHalf: batches && file?.status.kind == .regular)
        let recorder = ProgressRecorder(hub: progress, totalBytes: totalBytes, start: start) {
            let first = input.statistics
            let second = output?.statistics
            return (
                buffered: first.bytesBuffered + (second?.bytesBuffered ?? 0),
                peak: first.peakBytesBuffered + (second?.peakBytesBuffered ?? 0),
                suspended: first.suspendedDuration
            )
        }
        // A first snapshot at once, so a subscriber sees the operation start even when the
        // source is an idle pipe.
        recorder.recordWritten(0)

        var (results, errors) = await runStages(
            input: input, output: output, recorder: recorder, readExecutor: readExecutor,
            batches: batches)
        var verification: (outcome: CopyReport.VerificationOutcome, sourceCRC32: UInt32?)?
        if errors.isEmpty {
            do {
                verification = try await verifyAndCommit(results: results, recorder: recorder)
            } catch {
                errors.append(error)
            }
        }
        if let error = Self.primaryError(errors) {
            // The kernel refused a range of the source: the caller empties the sink and takes
            // another path, whose progress goes on in the same hub.
            if error is KernelCopyRefusal { throw error }
            await sink.abort()
            recorder.finish(succeeded: false)
            throw error
        }

        var report = CopyReport(
            bytesRead: recorder.bytesCompleted.load(ordering: .relaxed),
            bytesWritten: recorder.bytesWritten.load(ordering: .relaxed),
            crc32: nil, duration: ContinuousClock.now - start,
            peakBufferedBytes: input.statistics.peakBytesBuffered + (output?.statistics.peakBytesBuffered ?? 0),
            producerSuspended: input.statistics.suspendedDuration, warnings: [], verification: verification?.outcome)
        for result in results {
            switch result {
            case .read(_, let crc32, _): report.crc32 = report.crc32 ?? crc32 ?? verification?.sourceCRC32
            case .transformed(let summary, _):
                report.crc32 = options.computesCRC32 ? summary.crc32 : nil
                report.warnings += summary.warnings
            case .written: break
            }
        }
        recorder.finish(succeeded: true)
        return report
    }

    /// The error to report: the first that is not a consequence of another stage stopping
    /// (a cancellation, or a send refused because the consumer went away); when every error
    /// is such a consequence, `CancellationError`. A ``BoundedChannel/SendError`` is internal to the
    /// pipeline and never leaves ``run()``.
    static func primaryError(_ errors: [any Error]) -> (any Error)? {
        errors.first { !($0 is CancellationError) && !($0 is BoundedChannel<Chunk>.SendError) }
            ?? (errors.isEmpty ? nil : CancellationError())
    }

    /// The reading stage; `recorder` counts the bytes read, unless a paced stage counts them.
    ///
    /// A range of a source (``Chunk/sourceRange``) goes as it is to a sink that copies ranges
    /// (`readsRanges` is `nil`), which counts it once copied; for any other sink it is read here,
    /// by `readsRanges`, and its bytes go on as any others.
    static func read(
        _ source: Source, into channel: BoundedChannel<Chunk>, recorder: ProgressRecorder?, computesCRC32: Bool,
        readsRanges: (@Sendable (Chunk) throws -> [Chunk])?, hook: AwaitPointHook?
    ) async throws -> StageResult {
        let points = hook.map(AwaitPoints.init)
        var crc = CRC32()
        var bytes: Int64 = 0
        var kernel: Chunk.SourceRange.Method?
        do {
            func forward(_ chunk: Chunk) async throws {
                if computesCRC32 {
                    if chunk.isHole { crc.update(zeros: Int64(chunk.count)) } else { chunk.withUnsafeBytes { crc.update($0) } }
                }
                bytes += Int64(chunk.count)
                recorder?.recordRead(chunk.count)
                try await points.around(.readSend) { try await channel.send(chunk) }
            }
            var chunks = source.makeAsyncIterator()
            while let next = try await points.around(.sourceNext, { try await chunks.next() }) {
                guard let range = next.sourceRange else {
                    try await forward(next)
                    continue
                }
                if let readsRanges {
                    for chunk in try readsRanges(next) { try await forward(chunk) }
                } else {
                    kernel = range.method == .clone ? .clone : .kernelCopy
                    try await points.around(.readSend) { try await channel.send(next) }
                }
            }
            channel.finish()
            return .read(bytes: bytes, crc32: computesCRC32 && kernel == nil ? crc.value : nil, kernel: kernel)
        } catch {
            channel.fail(error)
            throw error
        }
    }

    /// The transform stage. A hole longer than `chunkSize` reaches a transform that is not one
    /// of Sluice's codecs (``TakesLongHoles``) in pieces of at most `chunkSize` bytes: one that
    /// makes data of a hole then holds no more than a data chunk.
    static func transform(
        _ input: BoundedChannel<Chunk>, into output: BoundedChannel<Chunk>, using makeTransform: Sluice.TransformFactory,
        chunkSize: Int, pacer: Pacer?, hook: AwaitPointHook?
    ) async throws -> StageResult {
        let points = hook.map(AwaitPoints.init)
        do {
            var transform = try makeTransform()
            let longestHole = transform is any TakesLongHoles ? Int.max : chunkSize
            let emit: (Chunk) async throws -> Void = { chunk in
                try await points.around(.transformSend) { try await output.send(chunk) }
            }
            var chunks = input.makeAsyncIterator()
            while let chunk = try await points.around(.transformReceive, { try await chunks.next() }) {
                try await pacer?.admit(chunk.count)
                guard chunk.isHole, chunk.count > longestHole else {
                    try await points.around(.transformProcess) { try await transform.process(chunk, emit: emit) }
                    continue
                }
                var left = chunk.count
                while left > 0 {
                    let piece = try Chunk.makeHole(count: Swift.min(left, longestHole))
                    left -= piece.count
                    try await points.around(.transformProcess) { try await transform.process(piece, emit: emit) }
                }
            }
            let summary = try await points.around(.transformFinish) { try await transform.finish(emit: emit) }
            output.finish()
            return .transformed(summary, verification: (transform as? any VerifiableTransform)?.verification)
        } catch {
            output.fail(error)
            throw error
        }
    }

    /// The paced stage's rate limit, and the progress that counts the bytes it lets through.
    struct Pacer: Sendable {
        let limiter: RateLimiter
        let recorder: ProgressRecorder

        func admit(_ bytes: Int) async throws {
            try await limiter.admit(bytes)
            recorder.recordRead(bytes)
        }
    }

    /// The most chunks the writer stage hands the sink at once (`IOV_MAX`, what one `writev(2)`
    /// takes; a descriptor's writes split them by ``Descriptor/maximumWriteSize`` bytes).
    static var maximumBatch: Int { 1024 }

    static func write(
        _ channel: BoundedChannel<Chunk>, to sink: Sink, recorder: ProgressRecorder, pacer: Pacer?,
        hook: AwaitPointHook?, batches: Bool
    ) async throws -> StageResult {
        let points = hook.map(AwaitPoints.init)
        let copiesRanges = sink as? any SourceRangeSink
        var chunks = channel.makeAsyncIterator()
        while let chunk = try await points.around(.writeReceive, { try await chunks.next() }) {
            // A range of a source is the kernel's to copy, not paced (a copy with a rate limit is
            // planned through reads and writes).
            if chunk.sourceRange == nil { try await pacer?.admit(chunk.count) }
            // Every chunk already waiting goes with it, in one call (one `writev(2)`); they
            // count against the channel's capacity until the next `next()`.
            var batch = [chunk]
            if batches { batch += channel.takeAvailable(upTo: maximumBatch - 1) }
            let counted = batch.reduce(0) { $0 + $1.count }
            if let copiesRanges, batch.contains(where: { $0.sourceRange != nil }) {
                // A range counts as read and written as the kernel copies it: as many bytes as
                // it finds (a file that grew, one that shrank), what it copied before a failure
                // included; the other chunks of the batch once written.
                try await points.around(.sinkWrite) {
                    try await copiesRanges.writeCopyingRanges(batch) { bytes in
                        recorder.recordRead(Int(bytes))
                        recorder.recordWritten(Int(bytes))
                    }
                }
                let others = batch.reduce(0) { $0 + ($1.sourceRange == nil ? $1.count : 0) }
                if others > 0 { recorder.recordWritten(others) }
            } else {
                try await points.around(.sinkWrite) { try await sink.write(contentsOf: batch) }
                recorder.recordWritten(counted)
            }
        }
        return .written
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

extension Pipeline where Source == FileChunks {
    /// Assembles a copy of a file: as the general initializer, and the file's reads run on its
    /// reader's thread, a regular file's chunks reach the writer in batches, and a verification
    /// (``PipelineOptions/verifiesOutput``) reads the file again for its CRC-32.
    ///
    /// - Parameters: as the general initializer's; `source` opened and not yet read.
    public init(
        from source: FileChunks, to sink: Sink, totalBytes: Int64?, options: PipelineOptions = PipelineOptions(),
        transform: Sluice.TransformFactory? = nil
    ) {
        self.init(
            from: source, to: sink, totalBytes: totalBytes, options: options, transform: transform, progress: ProgressHub())
    }

    /// The same, publishing to `progress`: a `RegularFileCopy` that falls back to the
    /// pipeline keeps the hub its caller subscribed to.
    init(
        from source: FileChunks, to sink: Sink, totalBytes: Int64?, options: PipelineOptions, transform: Sluice.TransformFactory?,
        progress: ProgressHub
    ) {
        self.init(
            from: source, to: sink, totalBytes: totalBytes, options: options, transform: transform, progress: progress,
            file: source)
    }
}

extension Pipeline where Source == SourceRanges {
    /// Assembles a copy that the kernel makes: the ranges of a file (a clone, `copy_file_range(2)`
    /// slices) through the pipeline to a sink that copies them (``FileSink``), publishing to
    /// `progress`. A verification reads the file again for its CRC-32 (a clone is not read
    /// back). When the kernel refuses a range, ``run()`` throws ``KernelCopyRefusal`` and
    /// leaves the sink open and the progress going, for the caller's next path.
    ///
    /// Its channel holds up to 256 chunks whatever `options` say: a range or a hole holds no
    /// bytes (a range at most 32 extents: 128 KiB of them per file), and the sink then takes
    /// them a batch at a time, not a switch between the two stages every few chunks.
    init(ranges: SourceRanges, to sink: Sink, options: PipelineOptions, progress: ProgressHub) {
        var options = options
        options.capacity = Swift.max(options.capacity, 256)
        self.init(
            from: ranges, to: sink, totalBytes: ranges.file.expectedSize, options: options, transform: nil, progress: progress,
            file: ranges.file)
    }
}

/// The 0.2 name of ``Pipeline``: the generic pipeline over any chunk sequence and sink, which
/// its name said was a copy of a file.
@available(*, deprecated, renamed: "Pipeline")
public typealias FileCopy<Source: AsyncSequence & Sendable, Sink: ChunkSink> = Pipeline<Source, Sink>
    where Source.Element == Chunk
