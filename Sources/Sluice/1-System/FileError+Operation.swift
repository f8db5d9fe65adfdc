extension FileError {
    /// The system call (or step of Sluice's own) that a ``FileError`` reports as failed.
    ///
    /// Its ``description`` is the system call's name (`open`, `fsync`, `posix_spawn`), for
    /// messages and logs; handle an error by its ``FileError/code``. Inside Sluice it is a
    /// closed set, so a misspelt operation does not compile.
    public struct Operation: Hashable, Sendable, CustomStringConvertible {
        private enum Call: String, Hashable, Sendable {
            case open, create, read, write, fsync, syncfs, close, rename, stat, lstat, fstat
            case fchmod, futimens, fsetxattr, fremovexattr
            case pipe2, mkdir, mkdtemp, opendir, wait4
            case lseek, ftruncate, fstatfs
            case openat, fstatat, mkdirat, symlinkat, readlinkat, linkat, mknodat, unlinkat
            case fchmodat, utimensat, fchownat, getdents, listxattr, getxattr, setxattr
            case clone = "FICLONE"
            case copyFileRange = "copy_file_range"
            case posixSpawn = "posix_spawn"
            case malloc, mmap
            case inotifyInit = "inotify_init1"
            case inotifyAddWatch = "inotify_add_watch"
            case statx, flock
        }

        private let call: Call
        private init(_ call: Call) { self.call = call }

        /// The system call's name, such as `fsync`.
        public var description: String { call.rawValue }

        /// The phrase a message uses for the operation: `cannot <verb> '<path>'`.
        var verb: String {
            switch call {
            case .write: "write to"
            case .fsync: "sync"
            case .syncfs: "sync the file system of"
            case .rename: "replace"
            case .stat, .lstat, .fstat: "stat"
            case .fchmod, .futimens, .fsetxattr, .fremovexattr: "set attributes of"
            case .clone: "clone to"
            case .copyFileRange: "copy to"
            case .lseek: "seek in"
            case .ftruncate: "set the size of"
            case .fstatfs: "stat the file system of"
            case .openat: "open"
            case .fstatat: "stat"
            case .mkdirat: "create directory"
            case .symlinkat: "create symbolic link"
            case .readlinkat: "read symbolic link"
            case .linkat: "create hard link"
            case .mknodat: "create special file"
            case .unlinkat: "remove"
            case .fchmodat, .utimensat, .fchownat, .setxattr: "set attributes of"
            case .getdents: "read directory"
            case .listxattr, .getxattr: "read attributes of"
            case .malloc, .mmap: "allocate"
            case .inotifyInit, .inotifyAddWatch: "watch"
            case .statx: "stat"
            case .flock: "lock"
            default: call.rawValue
            }
        }

        /// `malloc(3)` of a buffer Sluice sizes (a chunk, an encoder's output).
        package static let malloc = Operation(.malloc)
        /// `mmap(2)` of address space (the zeros a hole reads as).
        package static let mmap = Operation(.mmap)
        /// `inotify_init1(2)`: the instance a followed file's changes are watched through.
        package static let inotifyInit = Operation(.inotifyInit)
        /// `inotify_add_watch(2)` of a followed file or of its directory.
        package static let inotifyAddWatch = Operation(.inotifyAddWatch)
        /// `statx(2)` (a file's birth time).
        package static let statx = Operation(.statx)
        /// `flock(2)`.
        package static let flock = Operation(.flock)
        /// `open(2)` of an existing file (or of a directory to sync).
        package static let open = Operation(.open)
        /// `open(2)` with `O_CREAT | O_EXCL`: a new file, such as the temporary file of a
        /// destination.
        package static let create = Operation(.create)
        /// `read(2)` or `pread(2)`.
        package static let read = Operation(.read)
        /// `write(2)` or `pwrite(2)`.
        package static let write = Operation(.write)
        /// `fsync(2)`.
        package static let fsync = Operation(.fsync)
        /// `syncfs(2)`.
        package static let syncfs = Operation(.syncfs)
        /// `close(2)`.
        package static let close = Operation(.close)
        /// `rename(2)` or `renameat2(2)`.
        package static let rename = Operation(.rename)
        /// `stat(2)`.
        package static let stat = Operation(.stat)
        /// `lstat(2)`.
        package static let lstat = Operation(.lstat)
        /// `fstat(2)`.
        package static let fstat = Operation(.fstat)
        /// `fchmod(2)`.
        package static let fchmod = Operation(.fchmod)
        /// `futimens(3)`.
        package static let futimens = Operation(.futimens)
        /// `fsetxattr(2)`.
        package static let fsetxattr = Operation(.fsetxattr)
        /// `fremovexattr(2)`.
        package static let fremovexattr = Operation(.fremovexattr)
        /// `pipe2(2)`.
        package static let pipe2 = Operation(.pipe2)
        /// `mkdir(2)`.
        package static let mkdir = Operation(.mkdir)
        /// `mkdtemp(3)`.
        package static let mkdtemp = Operation(.mkdtemp)
        /// `opendir(3)`.
        package static let opendir = Operation(.opendir)
        /// `posix_spawn(3)`.
        package static let posixSpawn = Operation(.posixSpawn)
        /// `wait4(2)`.
        package static let wait4 = Operation(.wait4)
        /// `ioctl(2)` `FICLONE` (ioctl_ficlone(2)), or a clone refused by Sluice's path table.
        package static let clone = Operation(.clone)
        /// `copy_file_range(2)`.
        package static let copyFileRange = Operation(.copyFileRange)
        /// `lseek(2)`, also with `SEEK_DATA` and `SEEK_HOLE`.
        package static let lseek = Operation(.lseek)
        /// `ftruncate(2)`.
        package static let ftruncate = Operation(.ftruncate)
        /// `fstatfs(2)`.
        package static let fstatfs = Operation(.fstatfs)
        /// `openat(2)`, relative to a directory descriptor.
        package static let openat = Operation(.openat)
        /// `fstatat(2)`, relative to a directory descriptor.
        package static let fstatat = Operation(.fstatat)
        /// `mkdirat(2)`.
        package static let mkdirat = Operation(.mkdirat)
        /// `symlinkat(2)`.
        package static let symlinkat = Operation(.symlinkat)
        /// `readlinkat(2)`.
        package static let readlinkat = Operation(.readlinkat)
        /// `linkat(2)`.
        package static let linkat = Operation(.linkat)
        /// `mknodat(2)` (also a FIFO's `mkfifoat(3)`).
        package static let mknodat = Operation(.mknodat)
        /// `unlinkat(2)`.
        package static let unlinkat = Operation(.unlinkat)
        /// `fchmodat(2)`.
        package static let fchmodat = Operation(.fchmodat)
        /// `utimensat(2)`.
        package static let utimensat = Operation(.utimensat)
        /// `fchownat(2)`.
        package static let fchownat = Operation(.fchownat)
        /// `getdents64(2)`, through `readdir(3)`: listing a directory.
        package static let getdents = Operation(.getdents)
        /// `flistxattr(2)` or `llistxattr(2)`.
        package static let listxattr = Operation(.listxattr)
        /// `fgetxattr(2)` or `lgetxattr(2)`.
        package static let getxattr = Operation(.getxattr)
        /// `fsetxattr(2)` or `lsetxattr(2)`.
        package static let setxattr = Operation(.setxattr)
    }
}
