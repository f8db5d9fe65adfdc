/// One factory per system call: a ``FileError`` whose ``FileError/code`` is derived from the
/// `errno` (``FileError/code(for:)``) and whose `FileError/location` is the caller's.
extension FileError {
    /// `open(2)` of `path` failed.
    package static func open(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.open, path: path, errno: errno, file: file, line: line)
    }

    /// Creating `path` failed: `open(2)` with `O_CREAT | O_EXCL`.
    ///
    /// - Parameters:
    ///   - path: the path the message names.
    ///   - errno: what `open(2)` reported.
    ///   - cause: the error of the call on the file actually created, when the message names
    ///     another path (a temporary file is reported under its destination's name).
    ///   - file: the caller's `#fileID`, for `FileError/location`.
    ///   - line: the caller's line, for `FileError/location`.
    package static func create(
        path: Pathname, errno: ErrorNumber, cause: (any Error)? = nil, file: String = #fileID, line: Int = #line
    ) -> FileError {
        FileError(.create, path: path, errno: errno, cause: cause, file: file, line: line)
    }

    /// `read(2)` or `pread(2)` of `path` failed.
    package static func read(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.read, path: path, errno: errno, file: file, line: line)
    }

    /// `write(2)` or `pwrite(2)` to `path` failed.
    package static func write(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.write, path: path, errno: errno, file: file, line: line)
    }

    /// `fsync(2)` of `path` failed.
    package static func fsync(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.fsync, path: path, errno: errno, file: file, line: line)
    }

    /// `close(2)` of `path` failed.
    package static func close(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.close, path: path, errno: errno, file: file, line: line)
    }

    /// The `rename(2)` (or `renameat2(2)`) onto `path` failed.
    package static func rename(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.rename, path: path, errno: errno, file: file, line: line)
    }

    /// `stat(2)` of `path` failed.
    package static func stat(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.stat, path: path, errno: errno, file: file, line: line)
    }

    /// `lstat(2)` of `path` failed.
    package static func lstat(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.lstat, path: path, errno: errno, file: file, line: line)
    }

    /// `fstat(2)` of `path` failed.
    package static func fstat(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.fstat, path: path, errno: errno, file: file, line: line)
    }

    /// `fchmod(2)` of `path` failed.
    package static func fchmod(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.fchmod, path: path, errno: errno, file: file, line: line)
    }

    /// `futimens(3)` of `path` failed.
    package static func futimens(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.futimens, path: path, errno: errno, file: file, line: line)
    }

    /// `fsetxattr(2)` of `path` failed.
    package static func fsetxattr(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.fsetxattr, path: path, errno: errno, file: file, line: line)
    }

    /// `fremovexattr(2)` of `path` failed.
    package static func fremovexattr(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.fremovexattr, path: path, errno: errno, file: file, line: line)
    }

    /// `mkdir(2)` of `path` failed.
    package static func mkdir(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.mkdir, path: path, errno: errno, file: file, line: line)
    }

    /// `mkdtemp(3)` in the directory `path` failed.
    package static func mkdtemp(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.mkdtemp, path: path, errno: errno, file: file, line: line)
    }

    /// `opendir(3)` of `path` failed.
    package static func opendir(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.opendir, path: path, errno: errno, file: file, line: line)
    }

    /// `posix_spawn(3)` of the program `path` failed.
    package static func posixSpawn(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.posixSpawn, path: path, errno: errno, file: file, line: line)
    }

    /// `wait4(2)` for the child running the program `path` failed.
    package static func wait4(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.wait4, path: path, errno: errno, file: file, line: line)
    }

    /// `pipe2(2)` failed (for example `EMFILE`: the process is out of descriptors).
    package static func pipe2(errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.pipe2, path: nil, errno: errno, file: file, line: line)
    }

    /// `ioctl(2)` `FICLONE` into `path` failed (`EOPNOTSUPP`, `EXDEV`, ...).
    package static func clone(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.clone, path: path, errno: errno, file: file, line: line)
    }

    /// `copy_file_range(2)` into `path` failed.
    package static func copyFileRange(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.copyFileRange, path: path, errno: errno, file: file, line: line)
    }

    /// `lseek(2)` in `path` failed.
    package static func lseek(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.lseek, path: path, errno: errno, file: file, line: line)
    }

    /// `ftruncate(2)` of `path` failed.
    package static func ftruncate(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.ftruncate, path: path, errno: errno, file: file, line: line)
    }

    /// `fstatfs(2)` of `path` failed.
    package static func fstatfs(path: Pathname, errno: ErrorNumber, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.fstatfs, path: path, errno: errno, file: file, line: line)
    }
}
