#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What `stat(2)` says of a file: identity, kind, size, permissions, owner and times.
package struct FileStatus: Sendable, Hashable {
    /// The kind of file, from the `S_IFMT` bits of `st_mode`.
    package enum Kind: Sendable, Hashable {
        /// A regular file (`S_IFREG`).
        case regular
        /// A directory (`S_IFDIR`).
        case directory
        /// A symbolic link (`S_IFLNK`), as `lstat(2)` reports it.
        case symbolicLink
        /// A named pipe (`S_IFIFO`).
        case fifo
        /// A character device such as a terminal or `/dev/null` (`S_IFCHR`).
        case characterDevice
        /// A block device such as a disk (`S_IFBLK`).
        case blockDevice
        /// A Unix-domain socket (`S_IFSOCK`).
        case socket
        /// A type `stat(2)` reported that none of the others matches.
        case unknown
    }

    /// The device that holds the file (`st_dev`); with ``inode``, the file's identity.
    package var device: UInt64
    /// The inode number (`st_ino`).
    package var inode: UInt64
    /// The kind of file.
    package var kind: Kind
    /// The permission bits, including set-user-ID, set-group-ID and sticky (`st_mode & 07777`).
    package var permissions: UInt32

    /// ``permissions`` without the set-user-ID and set-group-ID bits: what a copy gets when it
    /// is not the same program (a compressed or decompressed output) or when its owner could
    /// not be kept (as `cp -p` drops them, and as `chown(2)` clears them).
    package var permissionsWithoutSetID: UInt32 { permissions & ~0o6000 }
    /// The size in bytes that the kernel reports (`st_size`). Not to be trusted as the amount of
    /// data: files in /proc report 0, files in /sys report 4096, and files grow and shrink.
    package var size: Int64
    /// The bytes the file has on the disk (`st_blocks` × 512, what `du` counts): less than
    /// ``size`` for a sparse file, whose holes have no blocks.
    package var allocatedBytes: Int64

    /// Whether the file may have holes to look for: a regular file with fewer blocks than
    /// bytes (as `cp` decides whether a file is sparse). A file with as many blocks as bytes
    /// gets no `SEEK_DATA`/`SEEK_HOLE` probes: on tmpfs one `SEEK_HOLE` over 1 GiB of data
    /// took 7–10 ms, walking its pages.
    package var mayHaveHoles: Bool { kind == .regular && size > 0 && allocatedBytes < size }
    /// The bytes a read of the file is expected to give, for a progress's total: a regular
    /// file's size (0 too); `nil` for anything else (a pipe, a device), which has none to know.
    package var knownSize: Int64? { kind == .regular ? size : nil }
    /// The file system's preferred size of a write, in bytes (`st_blksize`): its block size,
    /// the least a hole covers.
    package var blockSize: Int
    /// The count of hard links (`st_nlink`).
    package var linkCount: UInt64
    /// The owner's user ID.
    package var userID: UInt32
    /// The owner's group ID.
    package var groupID: UInt32
    /// Last access time (`st_atim`).
    package var accessTime: FileTime
    /// Last modification time (`st_mtim`).
    package var modificationTime: FileTime
    /// Last status change time (`st_ctim`): set by the kernel on any write or change of the
    /// inode (its size, links, mode), and settable by no one.
    package var changeTime: FileTime
    /// The device a character or block device file stands for (`st_rdev`); 0 for other kinds.
    package var representedDevice: UInt64

    init(_ raw: stat) {
        device = UInt64(raw.st_dev)
        inode = UInt64(raw.st_ino)
        switch raw.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        case S_IFIFO: kind = .fifo
        case S_IFCHR: kind = .characterDevice
        case S_IFBLK: kind = .blockDevice
        case S_IFSOCK: kind = .socket
        default: kind = .unknown
        }
        permissions = UInt32(raw.st_mode & 0o7777)
        size = Int64(raw.st_size)
        blockSize = Int(raw.st_blksize)
        allocatedBytes = Int64(raw.st_blocks) * 512
        linkCount = UInt64(raw.st_nlink)
        userID = raw.st_uid
        groupID = raw.st_gid
        accessTime = FileTime(raw.st_atim)
        modificationTime = FileTime(raw.st_mtim)
        changeTime = FileTime(raw.st_ctim)
        representedDevice = UInt64(raw.st_rdev)
    }

    /// The file's identity: its device and inode.
    package var identity: FileIdentity { FileIdentity(device: device, inode: inode) }

    /// Whether `other` is the same file (same device and inode).
    package func isSameFile(as other: FileStatus) -> Bool {
        identity == other.identity
    }

    /// What differs in `later`, a status of the file taken after this one, that says its
    /// content may have changed in between: another file (device and inode), its size, its
    /// modification time or its status change time (to the nanosecond), as gzip ("file size
    /// changed while zipping") and tar ("file changed as we read it") look; `nil` if none does.
    /// For example `size 62914560 -> 20971520 bytes, modification time`.
    package func changes(to later: FileStatus) -> String? {
        guard isSameFile(as: later) else { return "another file (inode \(later.inode), not \(inode))" }
        var changes: [String] = []
        if size != later.size { changes.append("size \(size) -> \(later.size) bytes") }
        if modificationTime != later.modificationTime { changes.append("modification time") }
        if changeTime != later.changeTime { changes.append("status change time") }
        return changes.isEmpty ? nil : changes.joined(separator: ", ")
    }

    /// `stat(2)` (follows symbolic links) or `lstat(2)` (does not), retried on `EINTR`.
    ///
    /// - Throws: ``FileError`` with the call's errno.
    package static func of(_ path: Pathname, followsLinks: Bool = true) throws(FileError) -> FileStatus {
        var raw = stat()
        do throws(ErrorNumber) {
            _ = try ErrorNumber.retryingInterrupts { path.withCString { followsLinks ? stat($0, &raw) : lstat($0, &raw) } }
        } catch {
            throw followsLinks ? .stat(path: path, errno: error) : .lstat(path: path, errno: error)
        }
        return FileStatus(raw)
    }
}

/// When a file was last modified or accessed (`FileStatus.modificationTime`), to the
/// nanosecond, as `struct timespec`: what a caller compares or keeps (`cp -p`).
package struct FileTime: Sendable, Hashable {
    /// Seconds since the Unix epoch.
    package var seconds: Int64
    /// Nanoseconds within the second (0..<1_000_000_000).
    package var nanoseconds: Int64

    /// Creates a time stamp.
    ///
    /// - Precondition: `nanoseconds` is in 0..<1_000_000_000.
    package init(seconds: Int64, nanoseconds: Int64) {
        precondition((0..<1_000_000_000).contains(nanoseconds), "nanoseconds must be within a second")
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    init(_ raw: timespec) {
        seconds = Int64(raw.tv_sec)
        nanoseconds = Int64(raw.tv_nsec)
    }

    var timespec: Glibc.timespec {
        Glibc.timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))
    }
}

/// Which file a status is of: its device and inode (`st_dev`, `st_ino`), the same for every
/// name of it, another for a file made in its place. What sets of files are kept by.
package struct FileIdentity: Hashable, Sendable {
    package var device: UInt64
    package var inode: UInt64

    package init(device: UInt64, inode: UInt64) {
        (self.device, self.inode) = (device, inode)
    }
}
