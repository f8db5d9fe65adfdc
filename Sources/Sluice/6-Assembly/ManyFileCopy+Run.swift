extension ManyFileCopy {
    /// Copies one file within its share, on `executor` (the file's slot), then completes it.
    func run(_ item: Indexed, _ share: PipelineShare, on executor: BlockingIOExecutor) async {
        let job = item.job
        tracker.started(index: item.index, file: job.source)
        let result: Result<Committed, any Error>
        do {
            result = .success(try await copy(job, index: item.index, share: share, on: executor))
        } catch {
            result = .failure(error)
        }
        // A file that failed counts as passed over, so the bar still reaches its end.
        let bytes = (try? result.get().report.bytesRead) ?? job.sourceStatus?.size ?? 0
        complete(item, result, bytes: bytes)
    }

    /// Opens the source and the destination, and copies by the path one file would take, with
    /// the reader, the sink and the progress forwarding all on `executor`.
    private func copy(_ job: Job, index: Int, share: PipelineShare, on executor: BlockingIOExecutor) async throws -> Committed {
        try Task.checkCancellation()
        let copyOptions = options.copy
        let chunks = try await FileChunks.open(
            at: job.sourceLocation, followsLinks: job.followsLinks, chunkSize: share.chunkSize,
            findsHoles: copyOptions.sparse != .never, executor: executor)
        var status = chunks.status
        // A compressed or decompressed file is data, never a set-ID program.
        if job.transform != nil { status.permissions &= ~0o6000 }
        var sinkOptions = job.sinkOptions
        sinkOptions.synchronizesDirectory = false
        let sink = try await FileSink.create(
            location: job.destinationLocation, source: status, options: sinkOptions, executor: executor)
        let replaces = await sink.replacesDestination
        var pipeline = copyOptions.pipeline
        pipeline.capacity = share.capacity
        pipeline.byteBudget = share.capacity * share.chunkSize
        pipeline.verification = job.verification
        let hub: ProgressHub
        let run: () async throws -> CopyReport
        if let transform = job.transform {
            let copy = FileCopy(
                from: chunks, to: sink, totalBytes: chunks.expectedSize, options: pipeline, transform: transform)
            (hub, run) = (copy.progress, copy.run)
        } else {
            var options = copyOptions
            options.pipeline = pipeline
            let copy = RegularFileCopy(from: chunks, to: sink, options: options)
            (hub, run) = (copy.progress, copy.run)
        }
        let updates = hub.subscribe()
        let tracker = tracker
        let forwarding = Task(executorPreference: executor) {
            for await snapshot in updates { tracker.advanced(index: index, bytesCompleted: snapshot.bytesCompleted) }
        }
        defer { forwarding.cancel() }
        let report = try await run()
        let durable = replaces && sinkOptions.synchronize
        if durable || job.afterCommit != nil {
            // On the sink's thread: the hook may block, and a full batch of directories is
            // synced by the record that fills it.
            let directories = directories
            let destination = job.destinationLocation
            await withTaskExecutorPreference(sink.preferredExecutor) {
                job.afterCommit?()
                if durable { directories.record(directoryOf: destination) }
            }
        }
        return Committed(report: report, warnings: await sink.warnings, isDurableOnceDirectorySynced: durable)
    }
}
