#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension FileSink: ReadBackSink {
    /// Makes the temporary file durable, drops its pages from the page cache and opens it again
    /// for reading, so that a verification reads what the device holds.
    ///
    /// The steps: the size of data that ends in a hole (`ftruncate(2)`, as the commit sets it);
    /// `fsync(2)` of the temporary file (skipped with `synchronizes: false`, and then
    /// the pages the writes left dirty stay in memory and are what is read back);
    /// `posix_fadvise(2)` with `POSIX_FADV_DONTNEED` on the whole file, which drops its clean
    /// cached pages (advice: a file system may keep them, and a failure is ignored); `open(2)` of
    /// the temporary file with `O_RDONLY` (an unnamed one through `/proc/self/fd/N`), checked by `fstat(2)` to be the file being written.
    /// Nothing is renamed: the destination is untouched until ``commit()``.
    ///
    /// - Returns: a descriptor open for reading the temporary file from its first byte, which
    ///   the caller closes; `nil` for a destination written in place (a device, a FIFO), which
    ///   cannot be read back.
    /// - Throws: ``FileError`` with the destination's path: the `fsync` (as `EIO` after a
    ///   failed write-back), the `open`, or `io` when the temporary file was replaced.
    package func openForReadBack() throws -> Descriptor? {
        guard case .open(let descriptor, let mode) = state, descriptor.rawValue >= 0 else {
            preconditionFailure("FileSink.openForReadBack after commit or abort")
        }
        guard case .replacing(let temporary, _) = mode else { return nil }
        try setSizeAfterHole(descriptor)
        if options.synchronizes {
            do { try descriptor.synchronize(system: system) } catch {
                throw FileError.fsync(path: destination, errno: error)
            }
        }
        _ = posix_fadvise(descriptor.rawValue, 0, 0, POSIX_FADV_DONTNEED)
        let reader: Descriptor
        do {
            // An unnamed file is opened again through /proc/self/fd.
            let named = temporary ?? FileLocation(path: Pathname("/proc/self/fd/\(descriptor.rawValue)"))
            reader = try openForReading(named, writtenThrough: descriptor)
        } catch {
            throw FileError(code: error.code, operation: .open, path: destination, errno: error.errno, cause: error)
        }
        let written = try? descriptor.status()
        guard let read = try? reader.status(), let written, read.isSameFile(as: written) else {
            try? reader.close(system: system)
            throw FileError(
                code: .io, operation: .open, path: destination,
                reason: "its temporary file '\(temporary?.description ?? "(unnamed)")' was replaced while it was written")
        }
        return reader
    }

    /// Opens `temporary` for reading. A file created without the owner's read bit (the source's
    /// bits, or the umask, leave it out) is given that bit for the `open(2)` only, through the
    /// descriptor it is written through, then its bits are put back.
    private func openForReading(_ temporary: FileLocation, writtenThrough descriptor: Descriptor) throws(FileError) -> Descriptor {
        do {
            return try temporary.open(O_RDONLY, system: system)
        } catch where error.errno == .permissionDenied {
            guard let mode = try? descriptor.status().permissions, mode & 0o400 == 0,
                fchmod(descriptor.rawValue, mode_t(mode | 0o400)) == 0
            else { throw error }
            defer { _ = fchmod(descriptor.rawValue, mode_t(mode)) }
            return try temporary.open(O_RDONLY, system: system)
        }
    }
}
