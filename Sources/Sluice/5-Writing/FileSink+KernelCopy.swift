import CSluiceShims

/// What a copy that the kernel makes (a clone, `copy_file_range(2)`) does to the temporary
/// file: a chunk that is a range of the source (``Chunk/sourceRange``) is copied inside the
/// kernel instead of written, and every other step of the sink (holes, attributes, `fsync(2)`,
/// the rename at the commit point, ``abort()``) stays the same.
extension FileSink: SourceRangeSink {
    /// Writes `chunks` in order: bytes and holes as ``write(contentsOf:)`` does, a range of the
    /// source by the method it names, at the same offset in the temporary file, whose offset
    /// then stands after it and after the holes that follow it (moved there when something is
    /// written next: ``FileSink/unsettledOffset``). With `synchronizes`,
    /// the write-back of each range copied starts at once (`sync_file_range(2)`
    /// `SYNC_FILE_RANGE_WRITE`, which does not wait), so that the `fsync(2)` at the commit finds
    /// most of the file on its way to the disk.
    ///
    /// `copied` is called with the bytes of each kernel call that copied some.
    ///
    /// - Throws: ``KernelCopyRefusal`` when the kernel refuses a range ("not here": the errno of
    ///   ``ErrorNumber/meansNotSupportedHere``, or a `copy_file_range(2)` that copies nothing
    ///   before the range's end, as kernels before 5.3 do for /proc and /sys files): the caller
    ///   empties the file (``discardContents()``) and takes another path. ``FileError``
    ///   (operation `clone`, `copy_file_range`, `lseek`, or a write's) for anything else.
    ///   `CancellationError` between two calls of a range to the end of file.
    package func writeCopyingRanges(_ chunks: [Chunk], copied: @Sendable (Int64) -> Void) throws {
        try copyRanges(chunks, startsWriteBack: options.synchronizes, copied: copied)
    }

    /// ``writeCopyingRanges(_:copied:)``, starting the write-back of each range or not (a small
    /// file synced in a batch does not: the batch's `syncfs(2)` writes it).
    package func copyRanges(_ chunks: [Chunk], startsWriteBack: Bool, copied: (Int64) -> Void) throws {
        var bytes: [Chunk] = []
        for chunk in chunks {
            if let range = chunk.sourceRange {
                if !bytes.isEmpty {
                    try write(contentsOf: bytes)
                    bytes.removeAll()
                }
                unsettledOffset = try copy(range, count: Int64(chunk.count), startsWriteBack: startsWriteBack, copied: copied)
            } else if chunk.isHole, makesHoles, bytes.isEmpty, let offset = unsettledOffset {
                // After a range: the offset moves past the hole when something is written.
                unsettledOffset = offset + Int64(chunk.count)
                sizeAfterHole = unsettledOffset
            } else {
                bytes.append(chunk)
            }
        }
        if !bytes.isEmpty { try write(contentsOf: bytes) }
    }

    /// Copies one range into the temporary file at its offset: a clone, or `copy_file_range(2)`
    /// calls until each of its data extents is copied (or, to the end of file, until one
    /// copies nothing), each call's bytes given to `copied`, and the holes between its extents
    /// as they are skipped. The file's offset does not move.
    ///
    /// - Returns: the offset after the bytes copied.
    private func copy(
        _ range: Chunk.SourceRange, count: Int64, startsWriteBack: Bool, copied report: (Int64) -> Void
    ) throws -> Int64 {
        guard let target = temporaryDescriptor else { preconditionFailure("a range copied into a file written in place") }
        sizeAfterHole = nil
        if range.method == .clone {
            do throws(ErrorNumber) { try target.clone(from: range.descriptor, system: system) } catch where error.meansNotSupportedHere {
                throw KernelCopyRefusal(method: .clone, errno: error)
            } catch {
                throw FileError.clone(path: destination, errno: error)
            }
            report(count)
            return count
        }
        if range.method == .kernelCopyToEnd {
            var offset = range.offset
            // In calls of 4 MiB, each a point of cancellation.
            while case let copied = try copySlice(range, into: target, at: offset, count: 4 << 20, startsWriteBack: startsWriteBack), copied > 0 {
                offset += copied
                report(copied)
                try Task.checkCancellation()
            }
            return offset
        }
        let end = range.offset + count
        var cursor = range.offset
        for piece in range.data(count: Int(count)) {
            if piece.lowerBound > cursor { report(piece.lowerBound - cursor) }  // a hole, skipped
            var offset = piece.lowerBound
            while offset < piece.upperBound {
                let copied = try copySlice(range, into: target, at: offset, count: piece.upperBound - offset, startsWriteBack: startsWriteBack)
                if copied == 0 { throw KernelCopyRefusal(method: .kernelCopy, errno: nil) }
                offset += copied
                report(copied)
                try Task.checkCancellation()
            }
            cursor = offset
        }
        if cursor < end {
            report(end - cursor)  // a hole at the end of the range: the file is sized at the commit
            sizeAfterHole = end
        }
        return end
    }

    /// One `copy_file_range(2)` of up to `count` bytes of `range`'s source at `offset`, to the
    /// same offset of `target` (the temporary file); then, with `startsWriteBack`, the start of the write-back.
    ///
    /// - Returns: the bytes copied; 0 at the end of the source.
    /// - Throws: ``KernelCopyRefusal`` ("not here"); ``FileError`` (`copy_file_range`).
    private func copySlice(
        _ range: Chunk.SourceRange, into target: Descriptor, at offset: Int64, count: Int64, startsWriteBack: Bool
    ) throws -> Int64 {
        let copied: Int
        do throws(ErrorNumber) {
            copied = try withExtendedLifetime(range.owner) { () throws(ErrorNumber) in
                try target.copyRange(from: range.descriptor, at: offset, count: Int(count), system: system)
            }
        } catch where error.meansNotSupportedHere {
            throw KernelCopyRefusal(method: .kernelCopy, errno: error)
        } catch {
            throw FileError.copyFileRange(path: destination, errno: error)
        }
        if startsWriteBack && copied > 0 { _ = system.synchronizeFileRange(target.rawValue, CSluiceShims_SYNC_FILE_RANGE_WRITE) }
        return Int64(copied)
    }

    /// The temporary file while it is open; `nil` for a destination written in place (a
    /// device, a FIFO), which the kernel copies never write.
    private var temporaryDescriptor: Descriptor? {
        guard case .open(let descriptor, .replacing) = state else { return nil }
        return descriptor
    }

    /// Whether the data goes to a temporary file that replaces the destination at the commit
    /// (not written in place): the only case where the kernel may write it.
    var replacesDestination: Bool { temporaryDescriptor != nil }

    /// The file system of the temporary file (so of the destination), from `fstatfs(2)`;
    /// `nil` when the destination is written in place.
    ///
    /// - Throws: ``FileError`` (operation `fstatfs`).
    func fileSystemType() throws(FileError) -> FileSystemType? {
        guard let descriptor = temporaryDescriptor else { return nil }
        do { return try descriptor.fileSystemType(system: system) } catch {
            throw FileError.fstatfs(path: destination, errno: error)
        }
    }

    /// Empties the temporary file and moves its offset back to 0, so that another path
    /// writes it from the start after a kernel copy gave up half-way.
    ///
    /// A file still empty (a path refused at its first call, as a clone on XFS made without
    /// reflink) is not truncated: XFS takes a truncated file for one being rewritten and writes
    /// it back at its close (1 GiB by `copy_file_range` after the refused clone: 0.34 s with
    /// the `ftruncate(2)`, against 0.23 s for `cp`).
    ///
    /// - Throws: ``FileError`` (operation `fstat`, `ftruncate` or `lseek`).
    func discardContents() throws(FileError) {
        guard let descriptor = temporaryDescriptor else { return }
        let size: Int64
        switch system.status(descriptor.rawValue) {
        case .success(let status): size = Int64(status.st_size)
        case .failure(let error): throw FileError.fstat(path: destination, errno: error)
        }
        if size > 0 {
            do throws(ErrorNumber) { try descriptor.setSize(0, system: system) } catch {
                throw FileError.ftruncate(path: destination, errno: error)
            }
        }
        do { try descriptor.seek(to: 0, system: system) } catch {
            throw FileError.lseek(path: destination, errno: error)
        }
        unsettledOffset = nil
        sizeAfterHole = nil
    }
}

/// A transform's patch (the index of an indexed gzip member) written over the temporary file.
extension FileSink: PatchableSink {
    /// Whether the data goes to a temporary file (not a destination written in place).
    package var acceptsPatches: Bool { replacesDestination }

    /// Writes `patch` at its offset of the temporary file (`pwrite(2)`: the file's offset stays).
    ///
    /// - Throws: ``FileError`` (operation `write`).
    package func apply(_ patch: OutputPatch) throws {
        guard let descriptor = temporaryDescriptor else { return }
        let written = patch.bytes.withUnsafeBytes { bytes in
            Result { () throws(ErrorNumber) in try descriptor.write(toAbsoluteOffset: patch.offset, bytes) }
        }
        if case .failure(let error) = written { throw FileError.write(path: destination, errno: error) }
    }
}
