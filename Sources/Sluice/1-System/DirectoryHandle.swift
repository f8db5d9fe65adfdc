import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An open directory to name files in, for a caller that reaches files deep in a tree or in a
/// directory that may be renamed meanwhile (a `FileLocation`, a `TreeWalker`'s entries): a
/// descriptor that closes itself when the last reference goes away, and the `*at` system calls
/// relative to it.
///
/// Work relative to a directory descriptor names each entry by one component, so no system
/// call ever sees a path longer than `PATH_MAX` however deep a tree goes, and an entry is
/// always looked up in the directory that was opened, not in whatever a path leads to now.
/// The descriptor is opened with `O_DIRECTORY | O_CLOEXEC` (and `O_NOFOLLOW` unless links are
/// followed), read-only (`O_RDONLY`): enough for listing it, `fsync(2)` and every `*at` call.
///
/// A class so that whoever still works in the directory (a `FileLocation` in a sink in
/// flight) keeps the descriptor open: it is closed by `deinit`, after the last reference.
///
/// Concurrency contract: immutable and `Sendable`; the calls block, so run them on a
/// `BlockingIOExecutor`, never on the cooperative pool. Calls from several threads at once
/// are safe (the kernel serializes them per directory).
package final class DirectoryHandle: Sendable {
    /// The descriptor (`O_RDONLY | O_DIRECTORY | O_CLOEXEC`).
    package let descriptor: Descriptor
    /// The path messages use for the directory (what the user named plus the components
    /// below it): it may be longer than `PATH_MAX` and is never given to a system call.
    package let path: Pathname
    /// The calls that open, make, name and remove entries (`openat`, `mkdirat`, `linkat`,
    /// `renameat2`, `unlinkat`): real unless a test gave its own; every directory opened from
    /// this one uses them too.
    let system: SystemCalls

    private init(descriptor: Descriptor, path: Pathname, system: SystemCalls) {
        self.descriptor = descriptor
        self.path = path
        self.system = system
    }

    deinit {
        _ = system.close(descriptor.rawValue)
    }

    /// Opens the directory at `path` (relative to the current directory, or absolute).
    ///
    /// - Parameters:
    ///   - path: the directory; a path the user gave, so shorter than `PATH_MAX`.
    ///   - followsLinks: whether a symbolic link at `path` itself is followed (`O_NOFOLLOW`
    ///     when not: a link then fails with `ELOOP` or `ENOTDIR`).
    /// - Throws: ``FileError`` (operation `openat`; `ENOTDIR` for a file that is not a directory).
    package static func open(_ path: Pathname, followsLinks: Bool = true) throws(FileError) -> DirectoryHandle {
        try open(path, followsLinks: followsLinks, system: .live)
    }

    /// The seam for tests: ``open(_:followsLinks:)`` through `system`, which every directory
    /// opened from this one uses too.
    static func open(_ path: Pathname, followsLinks: Bool = true, system: SystemCalls) throws(FileError) -> DirectoryHandle {
        try open(in: nil, name: path, path: path, followsLinks: followsLinks, system: system)
    }

    /// Opens the directory `name` in this one: `openat(2)` with `O_DIRECTORY | O_NOFOLLOW`
    /// (unless `followsLinks`) `| O_CLOEXEC`.
    ///
    /// - Parameters:
    ///   - name: one component (or `..` to reopen the parent).
    ///   - path: the path messages use for the new directory; by default this one's joined with `name`.
    ///   - followsLinks: whether a symbolic link named `name` is followed.
    /// - Throws: ``FileError`` (operation `openat`) with the new directory's path and errno.
    package func openDirectory(
        _ name: Pathname, path: Pathname? = nil, followsLinks: Bool = false
    ) throws(FileError) -> DirectoryHandle {
        try Self.open(in: self, name: name, path: path ?? self.path.appending(name), followsLinks: followsLinks, system: system)
    }

    private static func open(
        in parent: DirectoryHandle?, name: Pathname, path: Pathname, followsLinks: Bool, system: SystemCalls
    ) throws(FileError) -> DirectoryHandle {
        let flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (followsLinks ? 0 : O_NOFOLLOW)
        let directory = parent?.descriptor.rawValue ?? CSluiceShims_AT_FDCWD
        switch ErrorNumber.retryingInterrupts({ name.withCString { system.openAt(directory, $0, flags, 0) } }) {
        case .success(let raw): return DirectoryHandle(descriptor: Descriptor(rawValue: raw), path: path, system: system)
        case .failure(let error): throw FileError(.openat, path: path, errno: error)
        }
    }

    /// `fstat(2)` of the directory itself.
    ///
    /// - Throws: ``FileError`` (operation `fstat`).
    package func status() throws(FileError) -> FileStatus {
        do { return try descriptor.status() } catch { throw FileError.fstat(path: path, errno: error) }
    }

    /// `fstatat(2)` of the entry `name`, with `AT_SYMLINK_NOFOLLOW` unless `followsLinks`.
    ///
    /// - Throws: ``FileError`` (operation `fstatat`) with the entry's path; `ENOENT` for an
    ///   entry that vanished since it was listed.
    package func status(of name: Pathname, followsLinks: Bool = false) throws(FileError) -> FileStatus {
        var raw = stat()
        let flags = followsLinks ? 0 : CSluiceShims_AT_SYMLINK_NOFOLLOW
        do throws(ErrorNumber) {
            _ = try ErrorNumber.retryingInterrupts { name.withCString { fstatat(descriptor.rawValue, $0, &raw, flags) } }
        } catch {
            throw FileError(.fstatat, path: path.appending(name), errno: error)
        }
        return FileStatus(raw)
    }

    /// The names in the directory, as bytes (non-UTF-8 names and 255-byte names as they are),
    /// without `.` and `..`, in the order the file system gives them.
    ///
    /// Reads through a second descriptor (`openat(2)` of `.`), so this handle's offset is never
    /// moved and the listing can be repeated. The whole list is read at once: memory is the
    /// names of one directory, as `fts(3)` keeps them.
    ///
    /// - Throws: ``FileError`` (operation `getdents`) with the directory's path.
    package func entryNames() throws(FileError) -> [Pathname] {
        let raw: CInt
        switch ErrorNumber.retryingInterrupts({ system.openAt(descriptor.rawValue, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0) }) {
        case .success(let opened): raw = opened
        case .failure(let error): throw FileError(.getdents, path: path, errno: error)
        }
        guard let stream = fdopendir(raw) else {
            let error = ErrorNumber.current
            _ = Glibc.close(raw)
            throw FileError(.getdents, path: path, errno: error)
        }
        defer { closedir(stream) }
        var names: [Pathname] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw FileError(.getdents, path: path, errno: .current) }
                return names
            }
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { buffer -> [UInt8] in
                let end = buffer.firstIndex(of: 0) ?? buffer.count
                return Array(buffer[..<end])
            }
            if bytes == [UInt8(ascii: ".")] || bytes == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            names.append(Pathname(bytes: bytes))
        }
    }

    /// `openat(2)` of the entry `name` with `flags` (`O_CLOEXEC` added) and, for a created
    /// file, `permissions`.
    ///
    /// - Throws: ``FileError`` (operation `openat`) with the entry's path.
    package func openFile(_ name: Pathname, _ flags: CInt, permissions: mode_t = 0o666) throws(FileError) -> Descriptor {
        switch ErrorNumber.retryingInterrupts({ name.withCString { system.openAt(descriptor.rawValue, $0, flags | O_CLOEXEC, permissions) } }) {
        case .success(let raw): return Descriptor(rawValue: raw)
        case .failure(let error): throw FileError(.openat, path: path.appending(name), errno: error)
        }
    }

    /// `fsync(2)` of the directory: the names created or renamed in it reach the device.
    ///
    /// - Throws: ``FileError`` (operation `fsync`).
    package func synchronize() throws(FileError) {
        do { try descriptor.synchronize(system: system) } catch { throw FileError.fsync(path: path, errno: error) }
    }

    /// `syncfs(2)` of the file system that holds the directory: everything written to it
    /// reaches the device, the names and attributes of every directory on it included. One
    /// call where an `fsync(2)` of each of many directories would wait for a commit of the
    /// journal each.
    ///
    /// - Throws: ``FileError`` (operation `syncfs`, named by the directory's path).
    package func synchronizeFileSystem() throws(FileError) {
        if case .failure(let error) = ErrorNumber.retryingInterrupts({ system.synchronizeFileSystem(descriptor.rawValue) }) {
            throw FileError(.syncfs, path: path, errno: error)
        }
    }
}
