import CSluiceShims
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where a file to read or write is, for a caller that opens sources and sinks in a tree it
/// walks (``FileChunks/open(at:followsLinks:chunkSize:findsHoles:)``, a ``FileSink``): a name
/// relative to an open directory (`DirectoryHandle`), or a plain path relative to the
/// current directory (`AT_FDCWD`).
///
/// The system calls on a location are the `*at` ones with the directory's descriptor, so a
/// file deep in a tree is reached by one component, never by a path longer than `PATH_MAX`.
/// A location holds its directory, so the descriptor stays open while the location exists
/// (in a sink or a reader in flight). ``path`` is what messages say.
///
/// Concurrency contract: an immutable `Sendable` value; its calls block (run them on a
/// `BlockingIOExecutor`).
package struct FileLocation: Sendable, CustomStringConvertible {
    /// The directory ``name`` is relative to; `nil` for the current directory.
    package let directory: DirectoryHandle?
    /// The name given to the system calls: one component in ``directory``, or a whole path.
    package let name: Pathname
    /// The path messages use: the directory's path joined with the name, or the plain path.
    package let path: Pathname

    /// A plain path, relative to the current directory or absolute.
    package init(path: Pathname) {
        self.directory = nil
        self.name = path
        self.path = path
    }

    /// The entry `name` (one component) of `directory`.
    ///
    /// - Parameters:
    ///   - name: one component.
    ///   - directory: the open directory that holds it.
    ///   - path: what messages say; by default the directory's path joined with `name`.
    package init(name: Pathname, in directory: DirectoryHandle, path: Pathname? = nil) {
        self.directory = directory
        self.name = name
        self.path = path ?? directory.path.appending(name)
    }

    /// The ``path``.
    package var description: String { path.description }

    /// The descriptor the `*at` calls take: the directory's, or `AT_FDCWD`.
    var directoryDescriptor: CInt { directory?.descriptor.rawValue ?? CSluiceShims_AT_FDCWD }

    /// Another entry of the same directory: `name` beside this one.
    func sibling(_ name: Pathname) -> FileLocation {
        if let directory { return FileLocation(name: name, in: directory, path: path.directory.appending(name)) }
        return FileLocation(path: path.directory.appending(name))
    }

    /// `fstatat(2)` (`stat(2)` or `lstat(2)` for a plain path).
    ///
    /// - Throws: ``FileError`` (operation `stat` or `lstat`) with ``path``.
    package func status(followsLinks: Bool = true) throws(FileError) -> FileStatus {
        var raw = stat()
        let flags = followsLinks ? 0 : CSluiceShims_AT_SYMLINK_NOFOLLOW
        let directory = directoryDescriptor
        do throws(ErrorNumber) {
            _ = try ErrorNumber.retryingInterrupts { name.withCString { fstatat(directory, $0, &raw, flags) } }
        } catch {
            throw followsLinks ? .stat(path: path, errno: error) : .lstat(path: path, errno: error)
        }
        return FileStatus(raw)
    }

    /// Opens the file (`O_CLOEXEC` added): through ``SystemCalls/open`` for a plain path, so
    /// that tests' injected calls see it; ``SystemCalls/openAt`` in the directory otherwise.
    ///
    /// - Throws: ``FileError`` (operation `open`) with ``path``.
    func open(_ flags: CInt, permissions: mode_t = 0o666, system: SystemCalls) throws(FileError) -> Descriptor {
        guard let directory else { return try Descriptor.open(name, flags, permissions: permissions, system: system) }
        do throws(ErrorNumber) {
            let raw = try ErrorNumber.retryingInterrupts {
                name.withCString { system.openAt(directory.descriptor.rawValue, $0, flags | O_CLOEXEC, permissions) }
            }.get()
            return Descriptor(rawValue: raw)
        } catch {
            throw FileError.open(path: path, errno: error)
        }
    }

    /// Creates an unnamed file (`O_TMPFILE`, open for writing, `O_CLOEXEC` added) in the
    /// directory that holds this entry, with `mode` as the kernel narrows it at creation (the
    /// directory's default ACL, else the umask): ``SystemCalls/open`` of the directory's path for
    /// a plain path, ``SystemCalls/openAt`` of `.` in the directory otherwise. Nothing appears
    /// in the directory until ``link(descriptor:system:)`` names it; closed unnamed, it is gone.
    ///
    /// - Returns: the descriptor, or the errno (`EOPNOTSUPP` where the file system has no
    ///   `O_TMPFILE`, `EISDIR` on a kernel that does not know the flag).
    func createUnnamedSibling(mode: mode_t, system: SystemCalls) -> Result<Descriptor, ErrorNumber> {
        let flags = CSluiceShims_O_TMPFILE | O_WRONLY | O_CLOEXEC
        let opened = ErrorNumber.retryingInterrupts { () -> Result<CInt, ErrorNumber> in
            if let directory { return system.openAt(directory.descriptor.rawValue, ".", flags, mode) }
            return path.directory.withCString { system.open($0, flags, mode) }
        }
        return opened.map { Descriptor(rawValue: $0) }
    }

    /// `unlinkat(2)` of the name; errors ignored (a temporary file being discarded).
    func removeQuietly(system: SystemCalls = .live) {
        _ = remove(system: system)
    }

    /// `unlinkat(2)` of the name, through ``SystemCalls/unlinkAt``.
    func remove(system: SystemCalls) -> Result<Void, ErrorNumber> {
        let directory = directoryDescriptor
        return name.withCString { system.unlinkAt(directory, $0, 0) }
    }

    /// Renames this entry to `target`: ``SystemCalls/rename`` for two plain paths (the
    /// seam tests inject into), ``SystemCalls/renameAt`` otherwise; `flags` as `renameat2(2)`'s.
    func rename(to target: FileLocation, flags: CUnsignedInt, system: SystemCalls) -> Result<Void, ErrorNumber> {
        if directory == nil && target.directory == nil {
            return name.withCString { from in target.name.withCString { to in system.rename(from, to, flags) } }
        }
        let from = directoryDescriptor, to = target.directoryDescriptor
        return name.withCString { old in target.name.withCString { new in system.renameAt(from, old, to, new, flags) } }
    }

    /// `linkat(2)`: makes `target` another name of this file; `EEXIST` if it is taken.
    func link(to target: FileLocation, system: SystemCalls = .live) -> Result<Void, ErrorNumber> {
        let from = directoryDescriptor, to = target.directoryDescriptor
        return name.withCString { old in target.name.withCString { new in system.linkAt(from, old, to, new, 0) } }
    }

    /// `linkat(2)` of the file open as `descriptor` (an unnamed `O_TMPFILE` file): gives it this
    /// entry's name. By the descriptor itself (`AT_EMPTY_PATH`, no path to look up) where the
    /// kernel allows it (with `CAP_DAC_READ_SEARCH`, as root has), else by `/proc/self/fd/N` with
    /// `AT_SYMLINK_FOLLOW`, unprivileged wherever `/proc` is mounted (linkat(2), open(2) on
    /// `O_TMPFILE`). Once `AT_EMPTY_PATH` failed where `/proc` then succeeded, the process goes
    /// to `/proc` at once.
    ///
    /// - Returns: `EEXIST` if the name is taken, else the errno of `linkat(2)`.
    func link(descriptor: Descriptor, system: SystemCalls) -> Result<Void, ErrorNumber> {
        let to = directoryDescriptor
        if Self.linksByDescriptor.load(ordering: .relaxed) {
            let result = name.withCString { new in system.linkAt(descriptor.rawValue, "", to, new, CSluiceShims_AT_EMPTY_PATH) }
            // Refused (ENOENT from Linux without the capability; EPERM, EINVAL, ENOSYS or
            // EOPNOTSUPP from a sandbox that knows no AT_EMPTY_PATH): through /proc. Any other
            // errno (EEXIST, ENOSPC, EIO, ...) is the answer.
            guard case .failure(let error) = result,
                error == .noSuchFileOrDirectory || error == .notPermitted || error.meansNotSupportedHere
            else { return result }
        }
        let proc = "/proc/self/fd/\(descriptor.rawValue)"
        let result = proc.withCString { from in
            name.withCString { new in system.linkAt(CSluiceShims_AT_FDCWD, from, to, new, CSluiceShims_AT_SYMLINK_FOLLOW) }
        }
        // The failure before was a refusal of AT_EMPTY_PATH, not of the link: remember it.
        if case .success = result { Self.linksByDescriptor.store(false, ordering: .relaxed) }
        return result
    }

    /// Whether ``link(descriptor:system:)`` tries `AT_EMPTY_PATH` first: until it failed once
    /// where `/proc` succeeded.
    static let linksByDescriptor = Atomic(true)

    /// The inode flags (`FS_IOC_GETFLAGS`, through `system`) of the file or directory here,
    /// opened read-only without following a link and without blocking (by the real `openat(2)`:
    /// a query, whose failure only leaves the answer unknown); `nil` where it cannot be opened or
    /// the file system keeps no flags.
    func inodeFlags(system: SystemCalls) -> UInt32? {
        guard let descriptor = try? open(O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, system: .live) else { return nil }
        defer { try? descriptor.close() }
        return try? system.inodeFlags(descriptor.rawValue).get()
    }
}
