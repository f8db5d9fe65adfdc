import CSluiceShims

/// The two paths the kernel copies by: a clone, and `copy_file_range(2)` of the data extents.
extension RegularFileCopy {
    /// Copies by ``CopyMethod/clone`` or ``CopyMethod/kernelCopy`` and commits the sink.
    ///
    /// Runs on the sink's thread, so no blocking call reaches the cooperative pool. With a
    /// verification, a clone is reported as ``CopyReport/VerificationOutcome/sharedExtents`` and a kernel
    /// copy is checked by ``verifyKernelCopy(size:)`` before the commit.
    ///
    /// - Throws: ``GaveWay`` when the kernel refused the path (the temporary file is emptied
    ///   and the source's offset is back at 0 for the next path); anything else after aborting
    ///   the sink.
    func kernelCopy(start: ContinuousClock.Instant, cloning: Bool) async throws -> CopyReport {
        guard let descriptor = source.kernelCopySource else { preconditionFailure("no descriptor for a kernel copy") }
        let size = source.status.size
        let recorder = ProgressRecorder(hub: progress, totalBytes: source.expectedSize, start: start, statistics: Self.noFlow)
        recorder.recordWritten(0)
        var verification: CopyReport.VerificationOutcome?
        var crc32: UInt32?
        do {
            do {
                try await withTaskExecutorPreference(sink.preferredExecutor) {
                    try Task.checkCancellation()
                    if cloning {
                        try await sink.clone(from: descriptor)
                        Self.record(size, in: recorder)
                    } else {
                        try await copyExtents(of: descriptor, size: size, recorder: recorder)
                    }
                }
            } catch {
                throw GaveWay(error, path: cloning ? .clone : .kernelCopy) ?? error
            }
            try Task.checkCancellation()
            if options.pipeline.verification == .sameBytes {
                if cloning {
                    verification = .sharedExtents
                } else {
                    (verification, crc32) = try await verifyKernelCopy(size: size)
                }
            }
            try await sink.commit()
        } catch let gaveWay as GaveWay {
            do {
                try await sink.discardContents()
                try descriptor.seek(to: 0, system: source.system)
            } catch {
                await sink.abort()
                recorder.finish(succeeded: false)
                throw error
            }
            throw gaveWay
        } catch {
            await sink.abort()
            recorder.finish(succeeded: false)
            throw error
        }
        recorder.finish(succeeded: true)
        return CopyReport(
            bytesRead: recorder.bytesCompleted.load(ordering: .relaxed),
            bytesWritten: recorder.bytesWritten.load(ordering: .relaxed), crc32: crc32,
            duration: ContinuousClock.now - start, peakBufferedBytes: 0, producerSuspended: .zero, warnings: [],
            verification: verification)
    }

    /// `copy_file_range(2)` of the source's data extents into the sink's temporary file (see
    /// ``copyExtents(of:to:size:findsHoles:sliceSize:sourceSystem:system:sourcePath:destination:record:)``),
    /// inside the sink, on its thread, with no hop between two calls: a file of 10,000 extents
    /// makes 30,000 of them.
    private func copyExtents(of descriptor: Descriptor, size: Int64, recorder: ProgressRecorder) async throws {
        let (sourcePath, destination, sourceSystem) = (source.path, sink.destination, source.system)
        let sliceSize = Int64(options.sliceSize)
        let findsHoles = options.holes != .never
        // The map the reader walked and checked at its open, if it kept it: not walked twice.
        let knownExtents = findsHoles ? source.reader.dataExtents : nil
        let startsWriteBack = sink.options.synchronizes
        try await sink.withTemporaryFile { target, system in
            try Self.copyExtents(
                of: descriptor, to: target, size: size, findsHoles: findsHoles, knownExtents: knownExtents,
                sliceSize: sliceSize, sourceSystem: sourceSystem, system: system, sourcePath: sourcePath,
                destination: destination
            ) { done in
                Self.record(done, in: recorder)
                if startsWriteBack && done > 0 { Self.startWriteBack(of: target, system: system) }
            }
        }
    }

    /// `copy_file_range(2)` of each data extent of the first `size` bytes of `descriptor` to
    /// `target` (`SEEK_DATA`, `SEEK_HOLE` when `findsHoles`; otherwise, or where the file
    /// system does not answer them, all of it as one extent), in slices of at most `sliceSize`
    /// bytes; then, when the data reaches `size`, on to the end of file (a file that grew);
    /// when the file ends in a hole, `ftruncate(2)` to `size`. With `knownExtents` (the data
    /// extents of the map the reader walked at its open, ``HoleMap/dataExtents``), those are
    /// copied instead of asking `lseek(2)` again, as `cp` walks a file's map once. `record` is given
    /// the bytes done after each slice (holes count with the slice after them). Blocks: call
    /// it on a thread of a ``BlockingIOExecutor``.
    ///
    /// - Throws: ``GaveWay`` when a slice copies nothing before `size` (a /proc or /sys file on
    ///   an older kernel, a file that shrank); ``FileError`` of the calls; `CancellationError`
    ///   between slices.
    static func copyExtents(
        of descriptor: Descriptor, to target: Descriptor, size: Int64, findsHoles: Bool,
        knownExtents: [Range<Int64>]? = nil, sliceSize: Int64, sourceSystem: SystemCalls, system: SystemCalls,
        sourcePath: Pathname, destination: Pathname, record: (Int64) -> Void
    ) throws {
        var extents = DataExtents(
            descriptor: descriptor, size: size, findsHoles: findsHoles && knownExtents == nil,
            known: knownExtents.map { $0[...] }, system: sourceSystem, path: sourcePath)
        var offset: Int64 = 0
        var done: Int64 = 0  // counted in progress
        // One slice at `offset`, at most `count` bytes: what it copied (0 at the end of file).
        func copySlice(_ count: Int64) throws -> Int64 {
            try Task.checkCancellation()
            do throws(ErrorNumber) {
                return Int64(try target.copyRange(from: descriptor, at: offset, count: Int(count), system: system))
            } catch {
                throw FileError.copyFileRange(path: destination, errno: error)
            }
        }
        while offset < size {
            try Task.checkCancellation()
            guard let extent = try extents.next(from: offset) else { break }
            offset = extent.lowerBound  // past the hole before the extent
            while offset < extent.upperBound {
                let copied = try copySlice(min(sliceSize, extent.upperBound - offset))
                if copied == 0 { throw GaveWay(refusal: CopyMethod.Refusal(method: .kernelCopy, errno: nil)) }
                offset += copied
                record(offset - done)
                done = offset
            }
        }
        record(size - done)  // the hole at the end
        guard offset < size else {
            // Data up to the size: copied on to the end of file, as the pipeline reads and
            // `cp` copies, so a file that grew since its `fstat(2)` is copied whole.
            while case let copied = try copySlice(sliceSize), copied > 0 {
                offset += copied
                record(copied)
            }
            return
        }
        // Only a hole at the end needs the size set: a file whose data reaches its size has
        // it already, and XFS starts writing back a file at its close once it was truncated.
        do throws(ErrorNumber) { try target.setSize(size, system: system) } catch {
            throw FileError.ftruncate(path: destination, errno: error)
        }
    }

    /// Starts the write-back of what the kernel copy has written so far (`sync_file_range(2)`
    /// `SYNC_FILE_RANGE_WRITE`, which does not wait), so that a durable copy's `fsync(2)` at the
    /// commit finds most of the file on its way to the disk instead of all of it. Makes nothing
    /// durable by itself; an error it meets is the `fsync`'s to report, so it is not one here.
    private static func startWriteBack(of target: Descriptor, system: SystemCalls) {
        _ = system.synchronizeFileRange(target.rawValue, CSluiceShims_SYNC_FILE_RANGE_WRITE)
    }

    /// Counts `count` bytes as read and written (data copied, or a hole) and publishes a snapshot.
    private static func record(_ count: Int64, in recorder: ProgressRecorder) {
        guard count > 0 else { return }
        recorder.recordRead(Int(count))
        recorder.recordWritten(Int(count))
    }
}

/// The data extents of a kernel copy's source, in order: those of the map its reader kept
/// (`known`), else asked of `lseek(2)` (`SEEK_DATA`, `SEEK_HOLE`) when `findsHoles`, else all
/// of the file as one.
private struct DataExtents {
    let descriptor: Descriptor
    let size: Int64
    var findsHoles: Bool
    var known: ArraySlice<Range<Int64>>?
    let system: SystemCalls
    let path: Pathname

    /// The next data extent at or after `offset`, clipped to the size; `nil` once no data is
    /// left before the size.
    ///
    /// - Throws: ``FileError`` (`lseek`) when the file system fails a probe it knows.
    mutating func next(from offset: Int64) throws(FileError) -> Range<Int64>? {
        while known != nil {
            guard let next = known?.popFirst() else { return nil }
            let (start, end) = (max(next.lowerBound, offset), min(next.upperBound, size))
            if start < end { return start..<end }
        }
        guard findsHoles else { return offset..<size }
        do throws(ErrorNumber) {
            guard let data = try descriptor.nextData(from: offset, system: system) else { return nil }
            let end = try descriptor.nextHole(from: data, system: system) ?? size
            return min(data, size)..<min(end, size)
        } catch where CopyMethod.givesWay(on: error) {
            findsHoles = false  // a file system that does not know: all data
            return offset..<size
        } catch {
            throw FileError.lseek(path: path, errno: error)
        }
    }
}
