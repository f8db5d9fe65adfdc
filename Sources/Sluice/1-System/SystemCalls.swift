import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The system calls on Sluice's data path, as replaceable functions: the seam through which
/// tests inject `EINTR`, short counts and failures such as `EFBIG` without touching the kernel.
///
/// Each function performs one raw call and reports its result or its `errno`; retrying
/// `EINTR` and short counts is the job of ``Descriptor``, so an injected `EINTR` exercises
/// exactly the code that a real signal would.
///
/// The data path of a copy, a compress or a decompress goes through it call by call: the `open`
/// of the source, of the temporary file and of the directory to sync, every `read` and `write`,
/// both `fsync`s, every `close`, and the `rename` at the commit point; for a copy the kernel
/// makes, the clone (`FICLONE`), every `copy_file_range`, every `lseek` that looks for data or
/// holes, the `ftruncate` that sets a size and the `fstatfs` that picks the path; for a
/// destination, the `openat` that creates its unnamed (`O_TMPFILE`) or named temporary file, the
/// `linkat` that names it, the `renameat2` that replaces, the `unlinkat` that removes a temporary
/// and the `FS_IOC_GETFLAGS` that finds an append-only or immutable directory or file; for the
/// rest of what changes the disk, every attribute setter (`fchmod`, `fchown`, `futimens`,
/// `fsetxattr` and `fremovexattr`, and by name `fchmodat`, `utimensat`, `fchownat`, `lsetxattr`,
/// `lremovexattr`), `mkdirat`, `symlinkat`, `mknodat`, the many-file batch's `syncfs` and
/// `sync_file_range`, and `fstat` of a file whose holes are mapped. So a recorder of the seam sees
/// every call that changes what is on disk (the tests' crash-state explorer), but for a push
/// buffer's spill file (``PushBuffer``'s overflow to disk), which is unlinked as soon as it is made and so is
/// never part of what a crash leaves under a name but for that instant. Reads of metadata
/// elsewhere (`stat`, `fcntl`, `poll`, `getxattr`) are not part of it.
@dynamicMemberLookup
package struct SystemCalls: Sendable {
    /// The functions, kept once for every copy of a set: a set is a pointer, however many
    /// files and entries hold one (each durable file waiting for its batch's `syncfs(2)` held
    /// three copies of the 33 functions, 528 bytes each, before).
    package struct Functions: Sendable {
        /// `read(2)`: reads up to `count` bytes into the buffer; 0 at end of file.
        package var read: @Sendable (_ descriptor: CInt, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Result<Int, ErrorNumber>
        /// `write(2)`: writes up to `count` bytes from the buffer; may write fewer.
        package var write: @Sendable (_ descriptor: CInt, _ buffer: UnsafeRawPointer, _ count: Int) -> Result<Int, ErrorNumber>
        /// `writev(2)`: writes up to the total length of `count` buffers, in order, with one call;
        /// may write fewer bytes.
        package var writev: @Sendable (_ descriptor: CInt, _ vectors: UnsafePointer<iovec>, _ count: CInt) -> Result<Int, ErrorNumber>
        /// `fsync(2)`.
        package var fsync: @Sendable (_ descriptor: CInt) -> Result<Void, ErrorNumber>
        /// `open(2)`: opens `path` with `flags` (the caller adds `O_CLOEXEC`) and, for a created
        /// file, `mode`; returns the new descriptor.
        package var open: @Sendable (_ path: UnsafePointer<CChar>, _ flags: CInt, _ mode: mode_t) -> Result<CInt, ErrorNumber>
        /// `close(2)`: on Linux the descriptor is released even when an error (`EINTR`, `EIO`) is
        /// reported, so a replacement must release it too.
        package var close: @Sendable (_ descriptor: CInt) -> Result<Void, ErrorNumber>
        /// `renameat2(2)` with both paths relative to the current directory (`AT_FDCWD`): `flags`
        /// 0 is `rename(2)`; `RENAME_NOREPLACE` refuses to replace an existing `to` (`EEXIST`).
        package var rename: @Sendable (_ from: UnsafePointer<CChar>, _ to: UnsafePointer<CChar>, _ flags: CUnsignedInt) -> Result<Void, ErrorNumber>
        /// `ioctl(destination, FICLONE, source)` (ioctl_ficlone(2)): the destination file becomes a
        /// copy of the whole source that shares its extents. `EOPNOTSUPP` where the file system
        /// cannot, `EXDEV` across file systems.
        package var clone: @Sendable (_ destination: CInt, _ source: CInt) -> Result<Void, ErrorNumber>
        /// `copy_file_range(2)` of up to `count` bytes from `source` at `sourceOffset` to
        /// `destination` at `destinationOffset` (neither descriptor's offset moves); returns the
        /// count copied, 0 at the source's end.
        package var copyFileRange: @Sendable (
            _ source: CInt, _ sourceOffset: Int64, _ destination: CInt, _ destinationOffset: Int64, _ count: Int
        ) -> Result<Int, ErrorNumber>
        /// `lseek(2)`: moves the descriptor's offset (`SEEK_SET`, `SEEK_CUR`, `SEEK_END`) or finds
        /// the next data (`SEEK_DATA`) or hole (`SEEK_HOLE`) at or after `offset` (`ENXIO`: none).
        package var seek: @Sendable (_ descriptor: CInt, _ offset: Int64, _ whence: CInt) -> Result<Int64, ErrorNumber>
        /// `ftruncate(2)`: sets the file's size in bytes (what it gains reads as zeros, a hole).
        package var truncate: @Sendable (_ descriptor: CInt, _ size: Int64) -> Result<Void, ErrorNumber>
        /// `fstatfs(2)`'s `f_type`: the magic number of the file system that holds the file.
        package var fileSystemType: @Sendable (_ descriptor: CInt) -> Result<UInt32, ErrorNumber>

        // The calls that make, name and remove a destination's entries, relative to a directory
        // descriptor (`AT_FDCWD`: the current directory). Real unless a test sets them.

        /// `openat(2)`: opens `path` in `directory` with `flags` (the caller adds `O_CLOEXEC`) and,
        /// for a created file, `mode`; with `O_TMPFILE`, `path` is the directory itself (`.`) and the
        /// file made has no name.
        var openAt: @Sendable (_ directory: CInt, _ path: UnsafePointer<CChar>, _ flags: CInt, _ mode: mode_t) -> Result<CInt, ErrorNumber> =
            SystemCalls.liveOpenAt
        /// `linkat(2)`: gives the file `from` (in `fromDirectory`) the new name `to` in `toDirectory`;
        /// `EEXIST` if that name is taken. With `AT_SYMLINK_FOLLOW`, `from` may be
        /// `/proc/self/fd/N`, which names an unnamed (`O_TMPFILE`) file.
        var linkAt: @Sendable (
            _ fromDirectory: CInt, _ from: UnsafePointer<CChar>, _ toDirectory: CInt, _ to: UnsafePointer<CChar>, _ flags: CInt
        ) -> Result<Void, ErrorNumber> = SystemCalls.liveLinkAt
        /// `renameat2(2)`: `flags` 0 replaces an existing `to`; `RENAME_NOREPLACE` refuses it (`EEXIST`).
        var renameAt: @Sendable (
            _ fromDirectory: CInt, _ from: UnsafePointer<CChar>, _ toDirectory: CInt, _ to: UnsafePointer<CChar>, _ flags: CUnsignedInt
        ) -> Result<Void, ErrorNumber> = SystemCalls.liveRenameAt
        /// `mkdirat(2)`: makes the directory `path` in `directory` with `mode` (narrowed by the umask
        /// or the default ACL).
        var makeDirectoryAt: @Sendable (_ directory: CInt, _ path: UnsafePointer<CChar>, _ mode: mode_t) -> Result<Void, ErrorNumber> =
            SystemCalls.liveMakeDirectoryAt
        /// `unlinkat(2)`: removes the name `path` in `directory` (`AT_REMOVEDIR`: a directory).
        var unlinkAt: @Sendable (_ directory: CInt, _ path: UnsafePointer<CChar>, _ flags: CInt) -> Result<Void, ErrorNumber> =
            SystemCalls.liveUnlinkAt
        /// `ioctl(2)` `FS_IOC_GETFLAGS` (ioctl_iflags(2)): the inode flags `chattr(1)` sets, such as
        /// append-only and immutable; `ENOTTY` or `EOPNOTSUPP` where the file system keeps none.
        var inodeFlags: @Sendable (_ descriptor: CInt) -> Result<UInt32, ErrorNumber> = SystemCalls.liveInodeFlags

        // The calls that give a file or an entry its attributes, and the rest of what makes data
        // durable; with the calls above, every call that changes what is on disk goes through the
        // seam (a recorder of them sees everything a crash could keep or lose). Real unless a test
        // sets them (SystemCalls+Attributes.swift).

        /// `fchmod(2)`: the permission bits of the open file (or directory).
        var setPermissions: @Sendable (_ descriptor: CInt, _ mode: mode_t) -> Result<Void, ErrorNumber> = SystemCalls.liveSetPermissions
        /// `fchownat(2)` of the descriptor itself (`AT_EMPTY_PATH`, as `fchown(2)`, also for an
        /// `O_PATH` descriptor); `uid_t.max` or `gid_t.max` leaves that one as it is.
        var setOwner: @Sendable (_ descriptor: CInt, _ user: uid_t, _ group: gid_t) -> Result<Void, ErrorNumber> = SystemCalls.liveSetOwner
        /// `futimens(3)`: the access and modification times (two `timespec`s; `UTIME_OMIT` keeps one).
        var setTimes: @Sendable (_ descriptor: CInt, _ times: UnsafePointer<timespec>) -> Result<Void, ErrorNumber> = SystemCalls.liveSetTimes
        /// `fsetxattr(2)` (flags 0: create or replace) of the open file.
        var setExtendedAttribute: @Sendable (
            _ descriptor: CInt, _ name: UnsafePointer<CChar>, _ value: UnsafeRawBufferPointer
        ) -> Result<Void, ErrorNumber> = SystemCalls.liveSetExtendedAttribute
        /// `fremovexattr(2)` of the open file.
        var removeExtendedAttribute: @Sendable (_ descriptor: CInt, _ name: UnsafePointer<CChar>) -> Result<Void, ErrorNumber> =
            SystemCalls.liveRemoveExtendedAttribute
        /// `lsetxattr(2)` of the entry `path` (a symbolic link itself).
        var setEntryExtendedAttribute: @Sendable (
            _ path: UnsafePointer<CChar>, _ name: UnsafePointer<CChar>, _ value: UnsafeRawBufferPointer
        ) -> Result<Void, ErrorNumber> = SystemCalls.liveSetEntryExtendedAttribute
        /// `lremovexattr(2)` of the entry `path`.
        var removeEntryExtendedAttribute: @Sendable (_ path: UnsafePointer<CChar>, _ name: UnsafePointer<CChar>) -> Result<Void, ErrorNumber> =
            SystemCalls.liveRemoveEntryExtendedAttribute
        /// `fchmodat2(2)` of `path` in `directory` with `AT_SYMLINK_NOFOLLOW`.
        var setPermissionsAt: @Sendable (_ directory: CInt, _ path: UnsafePointer<CChar>, _ mode: mode_t) -> Result<Void, ErrorNumber> =
            SystemCalls.liveSetPermissionsAt
        /// `utimensat(2)` of `path` in `directory` with `AT_SYMLINK_NOFOLLOW`.
        var setTimesAt: @Sendable (_ directory: CInt, _ path: UnsafePointer<CChar>, _ times: UnsafePointer<timespec>) -> Result<Void, ErrorNumber> =
            SystemCalls.liveSetTimesAt
        /// `fchownat(2)` of `path` in `directory` with `AT_SYMLINK_NOFOLLOW`.
        var setOwnerAt: @Sendable (_ directory: CInt, _ path: UnsafePointer<CChar>, _ user: uid_t, _ group: gid_t) -> Result<Void, ErrorNumber> =
            SystemCalls.liveSetOwnerAt
        /// `symlinkat(2)`: the symbolic link `path` in `directory`, to `target`.
        var makeSymbolicLinkAt: @Sendable (_ target: UnsafePointer<CChar>, _ directory: CInt, _ path: UnsafePointer<CChar>) -> Result<Void, ErrorNumber> =
            SystemCalls.liveMakeSymbolicLinkAt
        /// `mknodat(2)`: the node `path` in `directory` (a FIFO, a device, a socket).
        var makeNodeAt: @Sendable (_ directory: CInt, _ path: UnsafePointer<CChar>, _ mode: mode_t, _ device: dev_t) -> Result<Void, ErrorNumber> =
            SystemCalls.liveMakeNodeAt
        /// `syncfs(2)`: writes the data and metadata of the whole file system that holds the file.
        var synchronizeFileSystem: @Sendable (_ descriptor: CInt) -> Result<Void, ErrorNumber> = SystemCalls.liveSynchronizeFileSystem
        /// `sync_file_range(2)` of the whole file with `flags`: starts or waits for the write-back
        /// of its pages; makes nothing durable by itself (no metadata, no device cache flush).
        var synchronizeFileRange: @Sendable (_ descriptor: CInt, _ flags: CUnsignedInt) -> Result<Void, ErrorNumber> =
            SystemCalls.liveSynchronizeFileRange
        /// `fstat(2)`.
        var status: @Sendable (_ descriptor: CInt) -> Result<stat, ErrorNumber> = SystemCalls.liveStatus
    }

    /// Shared by copies of a set; changed only when not shared (``subscript(dynamicMember:)``).
    private final class Box: @unchecked Sendable {
        var functions: Functions
        init(_ functions: Functions) { self.functions = functions }
    }

    private var box: Box

    /// Creates a set of system calls from the given functions; those not given are the real ones.
    package init(
        read: @escaping @Sendable (CInt, UnsafeMutableRawPointer, Int) -> Result<Int, ErrorNumber>,
        write: @escaping @Sendable (CInt, UnsafeRawPointer, Int) -> Result<Int, ErrorNumber>,
        fsync: @escaping @Sendable (CInt) -> Result<Void, ErrorNumber>,
        writev: (@Sendable (CInt, UnsafePointer<iovec>, CInt) -> Result<Int, ErrorNumber>)? = nil,
        open: @escaping @Sendable (UnsafePointer<CChar>, CInt, mode_t) -> Result<CInt, ErrorNumber> = SystemCalls.liveOpen,
        close: @escaping @Sendable (CInt) -> Result<Void, ErrorNumber> = SystemCalls.liveClose,
        rename: @escaping @Sendable (UnsafePointer<CChar>, UnsafePointer<CChar>, CUnsignedInt) -> Result<Void, ErrorNumber> =
            SystemCalls.liveRename,
        clone: @escaping @Sendable (CInt, CInt) -> Result<Void, ErrorNumber> = SystemCalls.liveClone,
        copyFileRange: @escaping @Sendable (CInt, Int64, CInt, Int64, Int) -> Result<Int, ErrorNumber> =
            SystemCalls.liveCopyFileRange,
        seek: @escaping @Sendable (CInt, Int64, CInt) -> Result<Int64, ErrorNumber> = SystemCalls.liveSeek,
        truncate: @escaping @Sendable (CInt, Int64) -> Result<Void, ErrorNumber> = SystemCalls.liveTruncate,
        fileSystemType: @escaping @Sendable (CInt) -> Result<UInt32, ErrorNumber> = SystemCalls.liveFileSystemType
    ) {
        // Without a `writev` of its own, a gathered write goes through `write`, one buffer per
        // call (a short `writev` is allowed to stop after the first buffer), so an injected
        // `write` sees every byte.
        let writev = writev ?? { descriptor, vectors, count in
            guard let first = UnsafeBufferPointer(start: vectors, count: Int(count)).first(where: { $0.iov_len > 0 }) else {
                return .success(0)
            }
            return write(descriptor, UnsafeRawPointer(first.iov_base!), first.iov_len)
        }
        box = Box(Functions(
            read: read, write: write, writev: writev, fsync: fsync, open: open, close: close, rename: rename, clone: clone,
            copyFileRange: copyFileRange, seek: seek, truncate: truncate, fileSystemType: fileSystemType))
    }

    /// One function of the set, read or replaced (`calls.fsync = { ... }`): a set is copied
    /// (its functions, once) only when one of two copies that share them is changed.
    package subscript<Value>(dynamicMember member: WritableKeyPath<Functions, Value>) -> Value {
        get { box.functions[keyPath: member] }
        set {
            if !isKnownUniquelyReferenced(&box) { box = Box(box.functions) }
            box.functions[keyPath: member] = newValue
        }
    }

    /// The real system calls.
    package static let live = SystemCalls(
        read: { descriptor, buffer, count in
            let result = Glibc.read(descriptor, buffer, count)
            return result < 0 ? .failure(.current) : .success(result)
        },
        write: { descriptor, buffer, count in
            let result = Glibc.write(descriptor, buffer, count)
            return result < 0 ? .failure(.current) : .success(result)
        },
        fsync: { descriptor in
            Glibc.fsync(descriptor) < 0 ? .failure(.current) : .success(())
        },
        writev: { descriptor, vectors, count in
            let result = Glibc.writev(descriptor, vectors, count)
            return result < 0 ? .failure(.current) : .success(result)
        }
    )

    /// The real `open(2)`.
    package static let liveOpen: @Sendable (UnsafePointer<CChar>, CInt, mode_t) -> Result<CInt, ErrorNumber> = { path, flags, mode in
        let descriptor = Glibc.open(path, flags, mode)
        return descriptor < 0 ? .failure(.current) : .success(descriptor)
    }

    /// The real `close(2)`.
    package static let liveClose: @Sendable (CInt) -> Result<Void, ErrorNumber> = { descriptor in
        Glibc.close(descriptor) < 0 ? .failure(.current) : .success(())
    }

    /// The real `rename(2)` (`flags` 0) or `renameat2(2)`.
    package static let liveRename: @Sendable (UnsafePointer<CChar>, UnsafePointer<CChar>, CUnsignedInt) -> Result<Void, ErrorNumber> = {
        from, to, flags in
        let result = flags == 0
            ? Glibc.rename(from, to)
            : renameat2(CSluiceShims_AT_FDCWD, from, CSluiceShims_AT_FDCWD, to, flags)
        return result < 0 ? .failure(.current) : .success(())
    }

    /// The real `ioctl(2)` `FICLONE`.
    package static let liveClone: @Sendable (CInt, CInt) -> Result<Void, ErrorNumber> = { destination, source in
        CSluiceShims_ficlone(destination, source) < 0 ? .failure(.current) : .success(())
    }

    /// The real `copy_file_range(2)`, with explicit offsets and no flags.
    package static let liveCopyFileRange: @Sendable (CInt, Int64, CInt, Int64, Int) -> Result<Int, ErrorNumber> = {
        source, sourceOffset, destination, destinationOffset, count in
        var input = Int(sourceOffset)
        var output = Int(destinationOffset)
        let result = copy_file_range(source, &input, destination, &output, count, 0)
        return result < 0 ? .failure(.current) : .success(result)
    }

    /// The real `lseek(2)`.
    package static let liveSeek: @Sendable (CInt, Int64, CInt) -> Result<Int64, ErrorNumber> = { descriptor, offset, whence in
        let result = lseek(descriptor, off_t(offset), whence)
        return result < 0 ? .failure(.current) : .success(Int64(result))
    }

    /// The real `ftruncate(2)`.
    package static let liveTruncate: @Sendable (CInt, Int64) -> Result<Void, ErrorNumber> = { descriptor, size in
        ftruncate(descriptor, off_t(size)) < 0 ? .failure(.current) : .success(())
    }

    /// The real `openat(2)`.
    static let liveOpenAt: @Sendable (CInt, UnsafePointer<CChar>, CInt, mode_t) -> Result<CInt, ErrorNumber> = {
        directory, path, flags, mode in
        let descriptor = openat(directory, path, flags, mode)
        return descriptor < 0 ? .failure(.current) : .success(descriptor)
    }

    /// The real `linkat(2)`.
    static let liveLinkAt: @Sendable (CInt, UnsafePointer<CChar>, CInt, UnsafePointer<CChar>, CInt) -> Result<Void, ErrorNumber> = {
        fromDirectory, from, toDirectory, to, flags in
        linkat(fromDirectory, from, toDirectory, to, flags) < 0 ? .failure(.current) : .success(())
    }

    /// The real `renameat2(2)`.
    static let liveRenameAt: @Sendable (CInt, UnsafePointer<CChar>, CInt, UnsafePointer<CChar>, CUnsignedInt) -> Result<Void, ErrorNumber> = {
        fromDirectory, from, toDirectory, to, flags in
        renameat2(fromDirectory, from, toDirectory, to, flags) < 0 ? .failure(.current) : .success(())
    }

    /// The real `mkdirat(2)`.
    static let liveMakeDirectoryAt: @Sendable (CInt, UnsafePointer<CChar>, mode_t) -> Result<Void, ErrorNumber> = { directory, path, mode in
        mkdirat(directory, path, mode) < 0 ? .failure(.current) : .success(())
    }

    /// The real `unlinkat(2)`.
    static let liveUnlinkAt: @Sendable (CInt, UnsafePointer<CChar>, CInt) -> Result<Void, ErrorNumber> = { directory, path, flags in
        unlinkat(directory, path, flags) < 0 ? .failure(.current) : .success(())
    }

    /// The real `FS_IOC_GETFLAGS`.
    static let liveInodeFlags: @Sendable (CInt) -> Result<UInt32, ErrorNumber> = { descriptor in
        var flags: CUnsignedInt = 0
        return CSluiceShims_inode_flags(descriptor, &flags) < 0 ? .failure(.current) : .success(flags)
    }

    /// The real `fstatfs(2)`, for its `f_type`.
    package static let liveFileSystemType: @Sendable (CInt) -> Result<UInt32, ErrorNumber> = { descriptor in
        let type = CSluiceShims_fstatfs_type(descriptor)
        return type < 0 ? .failure(.current) : .success(UInt32(truncatingIfNeeded: type))
    }
}
