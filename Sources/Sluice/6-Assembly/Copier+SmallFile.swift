#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Copier {
    /// Copies a dense regular file of at most one chunk in one step on its thread: no reader,
    /// channel, progress task or hop to an actor, which are most of what a small file of many
    /// costs. The same paths as `RegularFileCopy` (a clone, then `copy_file_range(2)`, on the
    /// file systems the table names, a kernel copy up to the chunk size on the others; else
    /// reads written by the sink), the same sink and commit point; a destination written in
    /// place (a device, a FIFO) gets the reads written to it.
    ///
    /// `copyOptions` are the file's (``copyOptions(of:share:)``), computed once by the caller for
    /// either route. Runs on `executor`'s thread (the file's slot), where the sink is created
    /// and called synchronously. A file that changed since the walk saw it (no longer regular, larger
    /// than a chunk, sparse) takes the general path instead.
    ///
    /// - Returns: the commit or the sealed file, or `nil` when the file does not qualify or its
    ///   destination is a FIFO no reader has opened yet (nothing was created).
    /// - Throws: as the general path: ``FileError``, `CancellationError` (nothing left).
    func copySmallFile(
        _ item: Indexed, copyOptions: RegularFileCopy.Options, share: PipelineShare, on executor: BlockingIOExecutor
    ) async throws -> Copied? {
        guard item.job.transform == nil, item.job.onCopyStart == nil, !copyOptions.pipeline.verifiesOutput,
            copyOptions.pipeline.rateLimit == nil,
            !copyOptions.forcesPipeline, copyOptions.holes == .auto, copyOptions.reflink != .always,
            let known = item.job.sourceStatus, Self.fitsInOneStep(known, chunkSize: share.chunkSize)
        else { return nil }
        try Task.checkCancellation()
        let start = ContinuousClock.now
        // Out of descriptors, a file waits while the engine releases some of its own.
        let source = try DescriptorBudget.retrying(whileReleasing: { waitForReleasedDescriptors(holding: 1) }, {
            try item.job.sourceLocation.open(O_RDONLY | O_NONBLOCK | (item.job.followsLinks ? 0 : O_NOFOLLOW), system: system)
        })
        defer { try? source.close(system: system) }
        let status: FileStatus
        do { status = try source.status(system: system) } catch { throw FileError.fstat(path: item.job.source, errno: error) }
        if status.kind == .directory { throw FileError.isDirectory(.read, path: item.job.source) }
        guard Self.fitsInOneStep(status, chunkSize: share.chunkSize) else { return nil }
        tracker.sized(index: item.progressIndex, bytes: status.knownSize)
        guard let sink = try DescriptorBudget.retrying(whileReleasing: { waitForReleasedDescriptors(holding: 1) }, {
            try FileSink.createOnExecutorThread(
                at: item.job.destinationLocation, source: status, options: sinkOptions(of: item.job), system: system,
                executor: executor)
        }) else { return nil }
        // `cp -p` keeps the source's ACL (`cp -a` its extended attributes), read by its
        // descriptor (as RegularFileCopy does, by the sink's own options). A destination written
        // in place (a device, a FIFO), opened already, replaces nothing: it gets writes.
        let replaces = onThread(of: sink) { sink in
            if sink.options.preservesAttributes { sink.preserveAttributes(of: source, at: item.job.source) }
            return sink.replacesDestination
        }
        var report: CopyReport
        let sealed: SealedFile?
        do {
            let (taken, method, refusals) = try await copyInOneStep(
                source, status: status, into: sink, job: item.job, copyOptions: copyOptions, chunkSize: share.chunkSize)
            observer?(.copiedInOneStep)
            let change = source.change(since: status, system: system)
            try Task.checkCancellation()
            sealed = try onThread(of: sink) { sink in
                if joinsSyncBatch(item.job) { return try sink.seal() }
                try sink.commit()
                return nil
            }
            report = CopyReport(
                bytesRead: taken.bytes, bytesWritten: taken.bytes, crc32: taken.crc32, duration: ContinuousClock.now - start,
                peakBufferedBytes: method == .pipeline ? Int64(share.chunkSize) : 0, producerSuspended: .zero,
                warnings: [], verification: nil, method: method, refusals: refusals)
            report.note(sourceChange: change, opened: status)
        } catch {
            onThread(of: sink) { $0.abort() }
            throw error
        }
        return onThread(of: sink) { finishCommit(item, sink: $0, sealed: sealed, report: report, replaces: replaces) }
    }

    /// Plans the copy of a small file and runs the plan (``CopyPlan``), each step synchronous on
    /// the sink's thread, so that it never suspends: what the attempt that copied returned (the
    /// bytes copied, their CRC-32 when computed), its method, and the methods refused before it.
    private func copyInOneStep(
        _ source: Descriptor, status: FileStatus, into sink: FileSink, job: Job, copyOptions: RegularFileCopy.Options,
        chunkSize: Int
    ) async throws -> (copy: (bytes: Int64, crc32: UInt32?), method: CopyMethod, refusals: [CopyMethod.Refusal]) {
        let plan = try onThread(of: sink) { sink in
            try CopyPlan.make(
                options: copyOptions, source: status, descriptor: source, sourcePath: job.source, sourceSystem: system,
                distrustsHoleMap: false, sink: sink)
        }
        return try await plan.run({ method in
            try onThread(of: sink) { sink in
                try Self.copy(
                    source, size: status.size, by: method, into: sink, sourcePath: job.source, chunkSize: chunkSize,
                    computesCRC32: copyOptions.pipeline.computesCRC32)
            }
        }, emptyingDestination: { try onThread(of: sink) { try $0.discardContents() } })
    }

    /// `sink.assumeIsolated(body)` where the caller may be async: it runs on the sink's thread
    /// (its slot, the executor its task prefers, which it never leaves), which is checked, not
    /// reached by a hop.
    private func onThread<T: Sendable>(of sink: FileSink, _ body: (isolated FileSink) throws -> T) rethrows -> T {
        try sink.assumeIsolated(body)
    }

    /// Whether a file is copied by ``copySmallFile(_:copyOptions:share:on:)``: regular, not empty, at most
    /// one chunk, with as many bytes allocated as its size (no hole to keep).
    private static func fitsInOneStep(_ status: FileStatus, chunkSize: Int) -> Bool {
        status.kind == .regular && status.size > 0 && status.size <= Int64(chunkSize) && !status.mayHaveHoles
    }

    /// Copies the `size` bytes of `source` into `sink`'s temporary file by `path`: a clone or
    /// `copy_file_range(2)` as ranges of the source that the sink copies (as for any file, then on
    /// to the end of file), or, for ``CopyMethod/pipeline``, reads of at most `chunkSize` bytes to
    /// the end of the file, each written by the sink (``FileSink/write(_:)``, its rules for a
    /// destination written in place included), with their CRC-32 when `computesCRC32` (the
    /// kernel's paths have none, as for one file).
    ///
    /// - Returns: the bytes copied, and the CRC-32 of the pipeline's.
    /// - Throws: ``KernelCopyRefusal`` when the kernel refuses the path; ``FileError``.
    private static func copy(
        _ source: Descriptor, size: Int64, by path: CopyMethod, into sink: isolated FileSink, sourcePath: Pathname,
        chunkSize: Int, computesCRC32: Bool
    ) throws -> (bytes: Int64, crc32: UInt32?) {
        switch path {
        case .clone, .kernelCopy:
            let ranges: [Chunk] = path == .clone
                ? [.sourceRange(Chunk.SourceRange(descriptor: source, offset: 0, method: .clone), count: Int(size))]
                : [
                    .sourceRange(Chunk.SourceRange(descriptor: source, offset: 0, method: .kernelCopy), count: Int(size)),
                    .sourceRange(Chunk.SourceRange(descriptor: source, offset: size, method: .kernelCopyToEnd), count: 0),
                ]
            var copied: Int64 = 0
            try sink.copyRanges(ranges, startsWriteBack: false) { copied += $0 }
            return (copied, nil)
        case .pipeline:
            // Opened with O_NONBLOCK (against a FIFO put there since the walk): reads wait.
            _ = fcntl(source.rawValue, F_SETFL, fcntl(source.rawValue, F_GETFL) & ~O_NONBLOCK)
            var copied: Int64 = 0
            var crc32 = CRC32()
            var buffer = [UInt8](repeating: 0, count: chunkSize)
            while true {
                try Task.checkCancellation()
                let read = buffer.withUnsafeMutableBytes { bytes in Result { () throws(ErrorNumber) in try source.readFully(into: bytes) } }
                let count: Int
                switch read {
                case .success(let value): count = value
                case .failure(let error): throw FileError.read(path: sourcePath, errno: error)
                }
                if count == 0 { return (copied, computesCRC32 ? crc32.value : nil) }
                copied += Int64(count)
                if computesCRC32 { buffer.withUnsafeBytes { crc32.update(UnsafeRawBufferPointer(rebasing: $0[..<count])) } }
                try sink.write(Chunk(Array(buffer[..<count])))
            }
        }
    }
}
