extension Copier {
    /// How a file's copy ended on its thread.
    enum Step {
        /// Renamed into place (or failed): completed.
        case done
        /// Sealed, its rename deferred to its sync batch (``SyncBatch``).
        case sealed(SyncBatch.Entry)
    }

    /// ``run(_:_:on:)`` of the file `held` holds, taken out of it, so that nothing but this
    /// call (and a sealed file's batch entry) holds the job once it returns.
    func run(taking held: LockedValue<Indexed?>, _ share: PipelineShare, on executor: BlockingIOExecutor) async -> Step {
        let item = held.withLock { item in
            defer { item = nil }
            return item!
        }
        return await run(item, share, on: executor)
    }

    /// Copies one file within its share, on `executor` (the file's slot), then completes it,
    /// or hands it sealed to the sync batch.
    func run(_ item: Indexed, _ share: PipelineShare, on executor: BlockingIOExecutor) async -> Step {
        let job = item.job
        tracker.started(index: item.progressIndex, file: job.source)
        let result: Result<Committed, any Error>
        do {
            switch try await copy(item, share: share, on: executor) {
            case .committed(let committed): result = .success(committed)
            case .sealed(let entry): return .sealed(entry)
            }
        } catch {
            result = .failure(error)
        }
        // A file that failed counts as passed over, so the bar still reaches its end.
        let bytes = (try? result.get().report.bytesRead) ?? job.sourceStatus?.size ?? 0
        complete(item, result, bytes: bytes)
        return .done
    }

    /// What a copy gives back: a commit, or a file sealed for its batch.
    enum Copied {
        case committed(Committed)
        case sealed(SyncBatch.Entry)
    }

    /// Whether a file's data is made durable by its batch's `syncfs(2)` rather than by an
    /// `fsync(2)` of its own: a durable copy without `--verify` (which reads back after its own
    /// sync).
    func joinsSyncBatch(_ job: Job) -> Bool {
        (job.sinkOverride ?? options.sink).synchronizes && verification(of: job) == nil
    }

    /// The sink options of `job`'s file: the engine's ``Options/sink`` (a tree's own, inside
    /// the package), with no directory sync (the engine syncs each directory once), and no
    /// `fsync(2)` of its own when its batch syncs the file system. Its holes are those its
    /// copy options were given (``copyOptions(of:share:)``), so the reader and the sink agree.
    func sinkOptions(of job: Job) -> FileSink.Options {
        var options = job.sinkOverride ?? self.options.sink
        options.synchronizesDirectory = false
        if joinsSyncBatch(job) {
            options.synchronizes = false
            // Under a low limit on open files a sealed file holds no descriptor while it waits.
            options.closesSealedFile = DescriptorBudget.current.sealedFiles == 0
        }
        return options
    }

    /// After the sink's commit: the sealed file for the batch when the rename was deferred
    /// (``FileSink/deferRename()``), else the commit (the attributes refused and the
    /// directory's record are recorded here, on the sink's thread). `replaces`: whether the sink wrote a temporary file to
    /// rename over the destination (read before the commit, which ends it), not a destination
    /// in place.
    func finishCommit(_ item: Indexed, sink: isolated FileSink, report: CopyReport, replaces: Bool) -> Copied {
        let job = item.job
        let refusals = sink.attributeRefusals
        var warnings = sink.warnings
        if let record = job.preservationWarnings {
            for (kind, error) in refusals { record.record(kind, error) }
        } else {
            warnings += refusals.map { StageWarning("cannot preserve \($0.kind): \($0.error)") }
        }
        if let file = sink.takeSealed() {
            return .sealed(SyncBatch.Entry(item: item, file: file, report: report, warnings: warnings))
        }
        let durable = replaces && (job.sinkOverride ?? options.sink).synchronizes
        if durable { directories.record(directoryOf: job.destinationLocation) }
        return .committed(Committed(report: report, warnings: warnings, isDurableOnceDirectorySynced: durable))
    }

    /// Opens the source and the destination, and copies by the path one file would take, with
    /// the reader, the sink and the progress forwarding all on `executor`.
    private func copy(_ item: Indexed, share: PipelineShare, on executor: BlockingIOExecutor) async throws -> Copied {
        let (job, index) = (item.job, item.progressIndex)
        try Task.checkCancellation()
        let copyOptions = copyOptions(of: job, share: share)
        if let copied = try copySmallFile(item, copyOptions: copyOptions, share: share, on: executor) { return copied }
        // Out of descriptors, a file waits while the engine releases some of its own.
        let chunks = try await DescriptorBudget.retrying(whileReleasing: { waitForReleasedDescriptors(holding: 1) }) {
            try await FileChunks.open(
                at: job.sourceLocation, followsLinks: job.followsLinks, chunkSize: share.chunkSize,
                findsHoles: copyOptions.holes.findsHoles(verifying: copyOptions.pipeline.verification != nil), executor: executor, system: system)
        }
        var status = chunks.status
        // A compressed or decompressed file is data, never a set-ID program.
        if job.transform != nil { status.permissions = status.permissionsWithoutSetID }
        let sink = try await DescriptorBudget.retrying(whileReleasing: { waitForReleasedDescriptors(holding: 1) }) {
            try await FileSink.create(
                at: job.destinationLocation, source: status, options: sinkOptions(of: job), system: system, executor: executor)
        }
        if joinsSyncBatch(job) { await sink.deferRename() }
        let replaces = await sink.replacesDestination
        let hub: ProgressHub
        let run: () async throws -> CopyReport
        if let transform = job.transform {
            let copy = FileCopy(
                from: chunks, to: sink, totalBytes: chunks.expectedSize, options: copyOptions.pipeline, transform: transform)
            (hub, run) = (copy.progress, copy.run)
        } else {
            let copy = RegularFileCopy(from: chunks, to: sink, options: copyOptions)
            (hub, run) = (copy.progress, copy.run)
        }
        // A file of one chunk is done in one step: its bytes count when it completes, with no
        // task to forward its progress.
        var forwarding: Task<Void, Never>?
        if status.kind != .regular || status.size > Int64(share.chunkSize) {
            let updates = hub.subscribe()
            let tracker = tracker
            forwarding = Task(executorPreference: executor) {
                for await snapshot in updates { tracker.advanced(index: index, bytesCompleted: snapshot.bytesCompleted, bytesWritten: snapshot.bytesWritten) }
            }
        }
        defer { forwarding?.cancel() }
        let report = try await run()
        // On the sink's thread: the hook may block, and a full batch of directories is synced by
        // the record that fills it.
        return await finishCommit(item, sink: sink, report: report, replaces: replaces)
    }
}
