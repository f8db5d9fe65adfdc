/// The stages of ``Pipeline/run()``: the channels between them, the stages in their task
/// groups, and the check and commit that follow.
extension Pipeline {
    /// The channel from the source and, with a transform, the one after it. A full channel
    /// resumes its producer once it has drained to half; with `wakingAtHalf` (a regular file's
    /// chunks) a waiting consumer wakes once half a channel is buffered: one thread wake-up per
    /// half a channel of chunks in either direction. A source that may stop for a while (a
    /// pipe, a push source) wakes the consumer at once, so a chunk never waits for the next.
    func makeChannels(wakingAtHalf: Bool) -> (input: BoundedChannel<Chunk>, output: BoundedChannel<Chunk>?) {
        let wakeThreshold = wakingAtHalf ? max(1, options.capacity / 2) : 1
        let make = {
            BoundedChannel<Chunk>(
                capacity: options.capacity, byteBudget: options.byteBudget, lowWatermark: options.capacity / 2,
                consumerWakeThreshold: wakeThreshold)
        }
        return (make(), makeTransform.map { _ in make() })
    }

    /// Runs the stages to their end and collects what each returned and every error.
    ///
    /// The stages before the sink run in a group of their own. When one of them fails, it
    /// fails its output channel and the others in that group are cancelled, while the sink
    /// writes what was produced before the error, then stops with it (as `gzip -dc` writes a
    /// whole member that precedes a truncated one). A failure of the sink stops them all.
    func runStages(
        input: BoundedChannel<Chunk>, output: BoundedChannel<Chunk>?, recorder: ProgressRecorder,
        readExecutor: (any TaskExecutor)?, batches: Bool
    ) async -> (results: [StageResult], errors: [any Error]) {
        // The stage that takes from the first channel is paced: the reader then waits on that
        // channel's backpressure. The bytes read count for progress as that stage lets them
        // through, so the bar shows the limited rate, not the channel filling at the start.
        let pacer = options.rateLimit.map { Pacer(limiter: $0, recorder: recorder) }
        let sink = self.sink
        let hook = awaitPointHook
        var results: [StageResult] = []
        var errors: [any Error] = []
        await withTaskGroup(of: (isSink: Bool, [Result<StageResult, any Error>]).self) { group in
            group.addTask {
                (false, await upstreamStages(
                    input: input, output: output, recorder: recorder, pacer: pacer, readExecutor: readExecutor))
            }
            // On the sink's own thread when it has one: each write then costs no hand-off.
            group.addTask(executorPreference: sink.preferredExecutor) {
                let writerPacer = output == nil ? pacer : nil
                return (true, [await Result {
                    try await Self.write(
                        output ?? input, to: sink, recorder: recorder, pacer: writerPacer, hook: hook,
                        batches: batches && writerPacer == nil)
                }])
            }
            for await (isSink, stages) in group {
                for result in stages {
                    switch result {
                    case .success(let value): results.append(value)
                    case .failure(let error):
                        if errors.isEmpty && isSink { group.cancelAll() }
                        errors.append(error)
                    }
                }
            }
        }
        return (results, errors)
    }

    /// The reading stage and the transform stage, if any; the first to fail cancels the other.
    private func upstreamStages(
        input: BoundedChannel<Chunk>, output: BoundedChannel<Chunk>?, recorder: ProgressRecorder, pacer: Pacer?,
        readExecutor: (any TaskExecutor)?
    ) async -> [Result<StageResult, any Error>] {
        let source = self.source
        let makeTransform = self.makeTransform
        let hook = awaitPointHook
        let computesCRC32 = (options.computesCRC32 || options.verifiesOutput) && makeTransform == nil
        // A sink that does not copy ranges of a source gets them read, on the reader's thread.
        let (chunkSize, path) = (file?.chunkSize ?? FileChunks.defaultChunkSize, file?.path ?? "-")
        let readsRanges: (@Sendable (Chunk) throws -> [Chunk])? = Self.rangeReader(
            for: sink, transformed: makeTransform != nil, chunkSize: chunkSize, path: path)
        return await withTaskGroup(of: Result<StageResult, any Error>.self) { upstream in
            // On the source's own thread when it has one: a file's reads then cost no thread
            // hand-off. Any other source (a push buffer, a sequence in memory) only hands over
            // chunks that are already there: its stage shares the sink's thread, so a chunk goes
            // from the source to the sink with no thread woken between them, and the stages take
            // turns (the reading one runs until the source is empty or the channel full, then
            // the writer takes a batch).
            let executor = readExecutor ?? sink.preferredExecutor ?? BlockingIOExecutor(label: "sluice.read-stage")
            upstream.addTask(executorPreference: executor) {
                await Result {
                    try await Self.read(
                        source, into: input, recorder: pacer == nil ? recorder : nil, computesCRC32: computesCRC32,
                        readsRanges: readsRanges, hook: hook)
                }
            }
            if let makeTransform, let output {
                upstream.addTask(executorPreference: BlockingIOExecutor(label: "sluice.transform")) {
                    await Result { try await Self.transform(
                            input, into: output, using: makeTransform, chunkSize: chunkSize, pacer: pacer, hook: hook) }
                }
            }
            var collected: [Result<StageResult, any Error>] = []
            for await result in upstream {
                if case .failure = result, !collected.contains(where: { if case .failure = $0 { true } else { false } }) {
                    upstream.cancelAll()
                }
                collected.append(result)
            }
            return collected
        }
    }

    /// How the reading stage reads a range of a source for a sink that does not copy ranges
    /// itself (or for a transform); `nil` when the sink copies them.
    private static func rangeReader(
        for sink: Sink, transformed: Bool, chunkSize: Int, path: Pathname
    ) -> (@Sendable (Chunk) throws -> [Chunk])? {
        if sink is any SourceRangeSink && !transformed { return nil }
        return { chunk in try chunk.readingSourceRange(chunkSize: chunkSize, path: path) }
    }

    /// After every stage succeeded: the transform's patch where the sink takes one
    /// (``PatchableSink``), the check of the output, if one was asked for, then the sink's
    /// commit (or the seal of ``sealing``).
    ///
    /// - Returns: the check's outcome, and the source's CRC-32 when the check had to read the
    ///   source again for it (ranges the kernel copied).
    func verifyAndCommit(
        results: [StageResult], recorder: ProgressRecorder
    ) async throws -> (outcome: CopyReport.VerificationOutcome, sourceCRC32: UInt32?)? {
        try Task.checkCancellation()
        let sink = self.sink
        for case .transformed(let summary, _) in results {
            if let patch = summary.patch, let sink = sink as? any PatchableSink, await sink.acceptsPatches {
                try await sink.apply(patch)
            }
        }
        let verification = options.verifiesOutput ? try await verifyOutput(results: results, recorder: recorder) : nil
        try await awaitPointHook.map(AwaitPoints.init).around(.sinkCommit) {
            if let sealing { try await sealing.seal() } else { try await sink.commit() }
        }
        return verification
    }
}
