/// What a copy that the kernel makes (a clone, `copy_file_range(2)`) does to the temporary
/// file: the data goes in without passing through ``write(contentsOf:)``, and every other step
/// of the sink (attributes, `fsync(2)`, the rename at the commit point, ``abort()``) stays
/// the same.
extension FileSink {
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

    /// Makes the temporary file a clone of all of `source` (`FICLONE`): one call, whatever
    /// the size.
    ///
    /// - Throws: ``FileError`` (operation `clone`) with the errno: `EOPNOTSUPP`, `EXDEV`,
    ///   `EINVAL`, `ENOTTY` where no clone is possible.
    func clone(from source: Descriptor) throws(FileError) {
        guard let descriptor = temporaryDescriptor else { preconditionFailure("FileSink.clone with no temporary file") }
        do { try descriptor.clone(from: source, system: system) } catch {
            throw FileError.clone(path: destination, errno: error)
        }
    }

    /// Runs `body` on the sink's thread with the temporary file and the sink's system calls:
    /// a loop of kernel calls (`copy_file_range(2)` slices) with no hop between them.
    ///
    /// - Throws: what `body` throws.
    func withTemporaryFile<R: Sendable>(_ body: @Sendable (Descriptor, SystemCalls) throws -> R) throws -> R {
        guard let descriptor = temporaryDescriptor else { preconditionFailure("FileSink.withTemporaryFile with no temporary file") }
        return try body(descriptor, system)
    }

    /// Sets the temporary file's size (`ftruncate(2)`): the end of a copy whose last bytes are
    /// a hole.
    ///
    /// - Throws: ``FileError`` (operation `ftruncate`).
    func setSize(_ size: Int64) throws(FileError) {
        guard let descriptor = temporaryDescriptor else { preconditionFailure("FileSink.setSize with no temporary file") }
        do { try descriptor.setSize(size, system: system) } catch {
            throw FileError.ftruncate(path: destination, errno: error)
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
        if size > 0 { try setSize(0) }
        do { try descriptor.seek(to: 0, system: system) } catch {
            throw FileError.lseek(path: destination, errno: error)
        }
        sizeAfterHole = nil
    }
}
