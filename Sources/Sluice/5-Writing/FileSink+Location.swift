import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The temporary file beside the destination's ``FileSink/location``, and the path its
/// extended attributes are reached by.
extension FileSink {
    /// Whether `/proc/self/fd` names this process's descriptors (`/proc` is mounted), so that an
    /// unnamed file can be given a name by it (`FileLocation/link(descriptor:system:)`).
    static let procNamesDescriptors: Bool = access("/proc/self/fd", X_OK) == 0

    /// Creates the file the data goes to until the commit point, in the destination's
    /// directory, with `mode` (which the kernel narrows by the default ACL or the umask):
    /// - unnamed (`O_TMPFILE`), where the file system and `/proc` allow it: nothing appears in
    ///   the directory until the commit point names it, so a crash or a refused commit leaves
    ///   nothing behind, and an append-only directory takes a new file;
    /// - else (`EOPNOTSUPP`, `EISDIR`, `EINVAL`, no `/proc`) named `.sluice-<random>.tmp`, with
    ///   `O_CREAT | O_EXCL`; refused at once in an append-only or immutable directory, where it
    ///   could never be renamed nor removed.
    ///
    /// `named` asks for a named one wherever the directory allows it (a sealed file closed
    /// while it waits, under a low `ulimit -n`).
    ///
    /// - Returns: the descriptor, and the temporary file's name (`nil`: unnamed).
    /// - Throws: ``FileError`` (operation `create`) naming the destination.
    static func createTemporaryFile(
        beside destination: FileLocation, mode: UInt32, system: SystemCalls, named: Bool = false
    ) throws(FileError) -> (Descriptor, FileLocation?) {
        // A named file in an append-only or immutable directory could never be renamed nor
        // removed: unnamed there, even where a named one was asked for.
        let protected = CSluiceShims_FS_APPEND_FL | CSluiceShims_FS_IMMUTABLE_FL
        let refusesNames = { directoryFlags(of: destination, system: system).map { $0 & protected != 0 } ?? false }
        if procNamesDescriptors && (!named || refusesNames()) {
            switch destination.createUnnamedSibling(mode: mode_t(mode), system: system) {
            case .success(let descriptor):
                return (descriptor, nil)
            case .failure(let error) where [EOPNOTSUPP, EISDIR, EINVAL].contains(error.rawValue):
                break  // no O_TMPFILE here: a named temporary file
            case .failure(let error):
                throw FileError.create(path: destination.path, errno: error)
            }
        }
        if refusesNames() {
            throw FileError.create(path: destination.path, errno: ErrorNumber(rawValue: EPERM))
        }
        while true {
            let temporary = destination.sibling(Descriptor.uniqueName(prefix: ".sluice-"))
            do {
                return (try temporary.open(O_WRONLY | O_CREAT | O_EXCL, permissions: mode_t(mode), system: system), temporary)
            } catch where error.errno == .fileExists {
                continue
            } catch {
                // Name the destination, not the temporary file, in the message.
                throw FileError.create(path: destination.path, errno: error.errno ?? .ioError, cause: error)
            }
        }
    }

    /// The inode flags (`FS_IOC_GETFLAGS`) of the directory that holds `location`; `nil` where
    /// the file system keeps none or the directory cannot be opened.
    static func directoryFlags(of location: FileLocation, system: SystemCalls) -> UInt32? {
        if let directory = location.directory { return try? system.inodeFlags(directory.descriptor.rawValue).get() }
        return FileLocation(path: location.path.directory).inodeFlags(system: system)
    }

    /// Whether `location`'s directory is on the file system mounted at `/dev` (the same device
    /// as `/dev`'s; where `/dev` is no mount of its own, `/dev` itself): its regular files and
    /// links are never replaced by a rename, since `/dev/stderr` and its kind name a descriptor
    /// or a device for every process.
    static func isInDeviceDirectory(_ location: FileLocation) -> Bool {
        guard let devices = try? FileStatus.of("/dev"), let root = try? FileStatus.of("/") else { return false }
        let directory: FileStatus? = if let handle = location.directory { try? handle.status() } else {
            try? FileStatus.of(location.path.directory)
        }
        guard let directory else { return false }
        return devices.device != root.device ? directory.device == devices.device : directory.isSameFile(as: devices)
    }

    /// Refuses, before anything is made, the replacement of the regular file or link at
    /// `location` that the kernel would refuse: its directory append-only or immutable (no name
    /// in it may be removed or replaced), or the file itself (`chattr +a`, `+i`).
    ///
    /// - Throws: ``FileError`` (operation `rename`, `EPERM`): `cannot replace '…': Operation not permitted`.
    static func refuseUnreplaceable(_ location: FileLocation, isRegular: Bool, system: SystemCalls) throws(FileError) {
        let protected = CSluiceShims_FS_APPEND_FL | CSluiceShims_FS_IMMUTABLE_FL
        let directory = directoryFlags(of: location, system: system) ?? 0
        let file = isRegular ? location.inodeFlags(system: system) ?? 0 : 0
        if (directory | file) & protected != 0 {
            throw FileError.rename(path: location.path, errno: ErrorNumber(rawValue: EPERM))
        }
    }

    /// The path the `*xattr(2)` calls reach the destination by: its own for a plain path, a
    /// short `/proc/self/fd/<directory>/<name>` for an entry of an open directory.
    static func attributePath(of location: FileLocation) -> Pathname {
        guard let directory = location.directory else { return location.path }
        return ExtendedAttributes.procPath(location.name, in: directory)
    }
}
