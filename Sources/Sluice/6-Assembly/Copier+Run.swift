extension Copier {
    /// Copies the file `held` holds within its share, on `executor` (the file's slot), then
    /// completes it. The job is taken out of `held`, so that nothing but this call (and a sealed
    /// file's batch entry) holds it once it returns.
    ///
    /// - Returns: the file sealed, for its sync batch (``SyncBatch``) to rename; `nil` once
    ///   it is completed (renamed into place, or failed).
    func run(taking held: LockedValue<Indexed?>, _ share: PipelineShare, on executor: BlockingIOExecutor) async -> SyncBatch.Entry? {
        let item = held.take(leaving: nil)!
        tracker.started(index: item.progressIndex, file: item.job.source)
        let result: Result<Committed, any Error>
        do {
            switch try await copy(item, share: share, on: executor) {
            case .committed(let committed): result = .success(committed)
            case .sealed(let entry): return entry
            }
        } catch {
            result = .failure(error)
        }
        // A file that failed counts as passed over, so the bar still reaches its end.
        let bytes = (try? result.get().report.bytesRead) ?? item.job.sourceStatus?.size ?? 0
        complete(Receipt(item), result, bytes: bytes)
        return nil
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
        options.batchesSyncs && writing(job).synchronizes && !(job.copyOptions ?? options.copy).pipeline.verifiesOutput
    }

    /// The sink options of `job`'s file: the engine's ``Options/sink`` (a tree's own, inside
    /// the package), with no directory sync (the engine syncs each directory once) unless it
    /// does not batch its syncs (``Options/batchesSyncs``), and no `fsync(2)` of its own when its
    /// batch syncs the file system. Its holes are those its
    /// copy options were given (``copyOptions(of:share:)``), so the reader and the sink agree.
    func sinkOptions(of job: Job) -> FileSink.Options {
        var options = writing(job)
        options.synchronizesDirectory = !self.options.batchesSyncs
        if joinsSyncBatch(job) {
            options.synchronizes = false
            // Under a low limit on open files a sealed file holds no descriptor while it waits.
            options.closesSealedFile = DescriptorBudget.current.sealedFiles == 0
        }
        return options
    }

    /// After the sink's commit or seal: `sealed`, the file its seal gave (``FileSink/seal()``),
    /// for the batch, else the commit (the attributes refused and the directory's record are
    /// recorded here, on the sink's thread). `replaces`: whether the sink wrote a temporary file
    /// to rename over the destination (read before the commit, which ends it).
    func finishCommit(_ item: Indexed, sink: isolated FileSink, sealed: SealedFile?, report: CopyReport, replaces: Bool) -> Copied {
        let refusals = sink.attributeRefusals
        var warnings = sink.warnings
        if let record = item.job.preservationWarnings {
            for (kind, error) in refusals { record.record(kind, error) }
        } else {
            warnings += refusals.map { StageWarning("cannot preserve \($0.kind): \($0.error)") }
        }
        if let file = sealed {
            return .sealed(SyncBatch.Entry(receipt: Receipt(item), file: file, report: report, warnings: warnings))
        }
        // A file that synced its directory itself is durable now; any other once its directory is.
        guard options.batchesSyncs else {
            return .committed(Committed(report: report, warnings: warnings, isDurableOnceDirectorySynced: sink.isDurablyCommitted))
        }
        let durable = replaces && writing(item.job).synchronizes
        if durable { directories.record(directoryOf: item.job.destinationLocation) }
        return .committed(Committed(report: report, warnings: warnings, isDurableOnceDirectorySynced: durable))
    }

    /// Opens the source and the destination and copies, with the reader, the sink and the
    /// progress forwarding all on `executor` (a descriptor's reads on a thread of their own): a
    /// file to a file without a transform by the path one file would take (in one step, or
    /// `RegularFileCopy`), any other job through the pipeline. A file destination is committed
    /// as any of the copier's files, a caller's sink by its own commit (or aborted here if the
    /// copy never ran).
    private func copy(_ item: Indexed, share: PipelineShare, on executor: BlockingIOExecutor) async throws -> Copied {
        try Task.checkCancellation()
        let job = item.job
        let copyOptions = copyOptions(of: job, share: share)
        if job.copiesFileToFile, let copied = try await copySmallFile(item, copyOptions: copyOptions, share: share, on: executor) {
            return copied
        }
        let (chunks, sink): (FileChunks?, FileSink?)
        do {
            chunks = try await openSource(of: job, chunkSize: share.chunkSize, copyOptions: copyOptions, on: executor)
            tracker.sized(index: item.progressIndex, bytes: chunks?.status.knownSize)
            sink = job.writesFile ? try await createFileSink(of: job, source: chunks?.status, on: executor) : nil
        } catch {
            if case .sink(let other, _) = job.output { await other.abort() }
            throw error
        }
        let replaces = await sink?.replacesDestination ?? false
        let sealing = sink.flatMap { joinsSyncBatch(job) ? SealedFileSlot($0) : nil }
        let copy = makeCopy(of: job, from: chunks, to: sink, copyOptions: copyOptions, sealing: sealing)
        var report = try await run(copy.run, publishingTo: copy.progress, item, source: chunks?.status, share, on: executor)
        if let chunks { report.note(sourceChange: chunks.changeSinceOpen(), opened: chunks.status) }
        guard let sink else { return .committed(Committed(report: report, warnings: [], isDurableOnceDirectorySynced: false)) }
        // On the sink's thread: the hook may block, and a full batch of directories is synced by
        // the record that fills it.
        return await finishCommit(item, sink: sink, sealed: sealing?.take(), report: report, replaces: replaces)
    }

    /// `job`'s copy from `chunks` (`nil` for a chunk sequence) to `sink` (`nil` for the caller's
    /// sink), ending with its commit or its seal into `sealing`, and the progress it publishes.
    private func makeCopy(
        of job: Job, from chunks: FileChunks?, to sink: FileSink?, copyOptions: RegularFileCopy.Options, sealing: SealedFileSlot?
    ) -> (run: () async throws -> CopyReport, progress: ProgressHub) {
        if job.copiesFileToFile, let chunks, let sink {
            let copy = RegularFileCopy(from: chunks, to: sink, options: copyOptions, sealingInto: sealing)
            return (copy.run, copy.progress)
        }
        let destination: AnyChunkSink
        switch job.output {
        case .sink(let other, _): destination = AnyChunkSink(other)
        case .file: destination = AnyChunkSink(sink!)
        }
        if case .chunks(let sequence, _) = job.input.kind {
            let copy = Pipeline(from: sequence, to: destination, totalBytes: nil, options: copyOptions.pipeline, transform: job.transform)
                .sealing(into: sealing)
            return (copy.run, copy.progress)
        }
        let copy = Pipeline(
            from: chunks!, to: destination, totalBytes: chunks!.expectedSize, options: copyOptions.pipeline, transform: job.transform
        ).sealing(into: sealing)
        return (copy.run, copy.progress)
    }

    /// Opens `job`'s source: a file at its location, a descriptor (its reads on a thread of
    /// its own: a read of a pipe may wait without end); `nil` for a chunk sequence. Out of
    /// descriptors, it waits while the engine releases some of its own.
    private func openSource(
        of job: Job, chunkSize: Int, copyOptions: RegularFileCopy.Options, on executor: BlockingIOExecutor
    ) async throws -> FileChunks? {
        try await DescriptorBudget.retrying(whileReleasing: { waitForReleasedDescriptors(holding: 1) }) {
            switch job.input.kind {
            case .file:
                try await FileChunks.open(
                    at: job.sourceLocation, followsLinks: job.followsLinks, chunkSize: chunkSize,
                    findsHoles: copyOptions.findsHoles, takesLongHoles: true,
                    executor: options.overlapsReadsAndWrites ? nil : executor, system: system)
            case .descriptor(let descriptor, let name):
                try await FileChunks.open(
                    name, descriptor: descriptor, ownsDescriptor: false, chunkSize: chunkSize,
                    findsHoles: copyOptions.findsHoles, takesLongHoles: true, system: .live)
            case .chunks:
                nil
            }
        }
    }

    /// Creates `job`'s destination file; out of descriptors, it waits while the engine releases
    /// some of its own.
    private func createFileSink(of job: Job, source: FileStatus?, on executor: BlockingIOExecutor) async throws -> FileSink {
        var status = source
        // A compressed or decompressed file is data, never a set-ID program.
        if job.transform != nil, let source { status?.permissions = source.permissionsWithoutSetID }
        let sink = try await DescriptorBudget.retrying(whileReleasing: { waitForReleasedDescriptors(holding: 1) }) {
            try await FileSink.create(
                at: job.destinationLocation, source: status, options: sinkOptions(of: job), system: system,
                executor: options.overlapsReadsAndWrites ? nil : executor)
        }
        return sink
    }

    /// Runs a copy, forwarding its progress (`hub`) to the engine's as it goes, except for a
    /// source (`status`) that is a regular file of at most one chunk of `share`, whose bytes
    /// count when it completes, with no task to forward them.
    private func run(
        _ copy: () async throws -> CopyReport, publishingTo hub: ProgressHub, _ item: Indexed, source status: FileStatus?,
        _ share: PipelineShare, on executor: BlockingIOExecutor
    ) async throws -> CopyReport {
        var forwarding: Task<Void, Never>?
        if let onCopyStart = item.job.onCopyStart {
            // The caller follows this copy's own progress; the engine's counts it at its end
            // (a forwarding task woken at every slice cost a 1 GiB copy 20 % on tmpfs).
            onCopyStart(hub)
        } else if status.map({ $0.kind != .regular || $0.size > Int64(share.chunkSize) }) ?? true {
            let (updates, tracker, index) = (hub.subscribe(), tracker, item.progressIndex)
            forwarding = Task(executorPreference: executor) {
                for await snapshot in updates { tracker.advanced(index: index, bytesCompleted: snapshot.bytesCompleted, bytesWritten: snapshot.bytesWritten) }
            }
        }
        defer { forwarding?.cancel() }
        return try await copy()
    }
}
