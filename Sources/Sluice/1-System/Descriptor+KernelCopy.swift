import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The calls of a copy that the kernel makes, and of files with holes: each through the
/// ``SystemCalls`` seam, retried on `EINTR`.
extension Descriptor {
    /// Makes this file (opened for writing) a clone of all of `source`: `ioctl(2)` `FICLONE`
    /// (ioctl_ficlone(2)). The two files share their extents until one of them is written: no
    /// data is copied and no space is used. This file's size becomes the source's.
    ///
    /// - Throws: the call's ``ErrorNumber``: `EOPNOTSUPP` (or `EINVAL`, `ENOTTY`) where the file
    ///   system cannot clone, `EXDEV` when the two files are on different file systems.
    package func clone(from source: Descriptor, system: SystemCalls = .live) throws(ErrorNumber) {
        try ErrorNumber.retryingInterrupts { system.clone(rawValue, source.rawValue) }.get()
    }

    /// Copies up to `count` bytes of `source` at `offset` to this file at the same offset,
    /// inside the kernel: one `copy_file_range(2)`, retried on `EINTR`. Neither descriptor's
    /// offset moves.
    ///
    /// - Returns: the count of bytes copied: fewer than `count` is not an error; 0 means the
    ///   source has no byte at `offset` (or, on kernels before 5.3, that it is a /proc or /sys
    ///   file, whatever its size says).
    /// - Throws: the call's ``ErrorNumber``: `EXDEV` across file systems, `EOPNOTSUPP`, `EINVAL`,
    ///   `ENOSYS` where it cannot; `ENOSPC`, `EIO` and the like as a write would.
    package func copyRange(
        from source: Descriptor, at offset: Int64, count: Int, system: SystemCalls = .live
    ) throws(ErrorNumber) -> Int {
        try ErrorNumber.retryingInterrupts { system.copyFileRange(source.rawValue, offset, rawValue, offset, count) }.get()
    }

    /// `lseek(2)` to `offset` from the start (`SEEK_SET`).
    ///
    /// - Throws: the call's ``ErrorNumber``.
    package func seek(to offset: Int64, system: SystemCalls = .live) throws(ErrorNumber) {
        _ = try ErrorNumber.retryingInterrupts { system.seek(rawValue, offset, SEEK_SET) }.get()
    }

    /// `lseek(2)` by `distance` bytes from the current offset (`SEEK_CUR`): past the end of a
    /// regular file, what is skipped becomes a hole once something is written after it, or
    /// the size is set (``setSize(_:system:)``).
    ///
    /// - Returns: the new offset.
    /// - Throws: the call's ``ErrorNumber``; `ESPIPE` for a pipe or a terminal.
    package func skip(_ distance: Int64, system: SystemCalls = .live) throws(ErrorNumber) -> Int64 {
        try ErrorNumber.retryingInterrupts { system.seek(rawValue, distance, SEEK_CUR) }.get()
    }

    /// The offset of the first data at or after `offset`: `lseek(2)` with `SEEK_DATA`. The
    /// descriptor's offset moves there.
    ///
    /// - Returns: the offset, or `nil` when nothing but a hole follows (`ENXIO`).
    /// - Throws: any other ``ErrorNumber`` (`EINVAL` where the file system does not know).
    package func nextData(from offset: Int64, system: SystemCalls = .live) throws(ErrorNumber) -> Int64? {
        switch ErrorNumber.retryingInterrupts({ system.seek(rawValue, offset, CSluiceShims_SEEK_DATA) }) {
        case .success(let found): return found
        case .failure(.noSuchAddressOrDevice): return nil
        case .failure(let error): throw error
        }
    }

    /// The offset of the first hole at or after `offset` (the end of the file counts as one):
    /// `lseek(2)` with `SEEK_HOLE`. The descriptor's offset moves there.
    ///
    /// - Returns: the offset; `nil` when `offset` is at or past the end (`ENXIO`).
    /// - Throws: any other ``ErrorNumber``.
    package func nextHole(from offset: Int64, system: SystemCalls = .live) throws(ErrorNumber) -> Int64? {
        switch ErrorNumber.retryingInterrupts({ system.seek(rawValue, offset, CSluiceShims_SEEK_HOLE) }) {
        case .success(let found): return found
        case .failure(.noSuchAddressOrDevice): return nil
        case .failure(let error): throw error
        }
    }

    /// Sets the file's size: `ftruncate(2)`, retried on `EINTR`. What it adds is a hole.
    ///
    /// - Parameters:
    ///   - size: the size in bytes (>= 0).
    ///   - system: the system calls to use.
    /// - Throws: the call's ``ErrorNumber`` (`EFBIG` past the file size limit).
    package func setSize(_ size: Int64, system: SystemCalls = .live) throws(ErrorNumber) {
        try ErrorNumber.retryingInterrupts { system.truncate(rawValue, size) }.get()
    }

    /// The file system that holds the file: `fstatfs(2)`'s `f_type`.
    ///
    /// - Throws: the call's ``ErrorNumber``.
    package func fileSystemType(system: SystemCalls = .live) throws(ErrorNumber) -> FileSystemType {
        FileSystemType(rawValue: try ErrorNumber.retryingInterrupts { system.fileSystemType(rawValue) }.get())
    }
}

extension ErrorNumber {
    /// Whether this errno, from a clone, a `copy_file_range(2)` or a hole probe (`lseek(2)`'s
    /// `SEEK_DATA`), means "not here": the file system or the pair of files cannot, and a copy
    /// takes another path. `EXDEV`, `EOPNOTSUPP`, `EINVAL`, `ENOSYS`, `ENOTTY`, as
    /// ioctl_ficlone(2) and copy_file_range(2) list them for a file system or a pair of files
    /// that cannot; and `EPERM` and `ETXTBSY`, which a seccomp filter (older container profiles,
    /// systemd's `SystemCallFilter=`) answers for a call it forbids, and on which coreutils' `cp`
    /// falls back to `read`/`write` too. A copy the pipeline cannot make either fails there with
    /// the same errno.
    package var meansNotSupportedHere: Bool {
        [.improperLink, .notSupported, .invalidArgument, .noFunction, .inappropriateIOCTLForDevice, .notPermitted,
         .textFileBusy].contains(self)
    }
}
