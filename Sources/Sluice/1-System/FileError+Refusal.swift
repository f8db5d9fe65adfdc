/// The errors of Sluice's own rules: refusals that no system call reported.
extension FileError {
    /// The source and the destination are one file (same device and inode).
    package static func sameFile(destination: Pathname, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(
            code: .sameFile, operation: .write, path: destination,
            reason: "source and destination are the same file", file: file, line: line)
    }

    /// `operation` (`malloc`, `mmap`) could not have `bytes` bytes: memory or address space ran
    /// out: `cannot allocate: out of memory for 1048576 bytes`.
    package static func outOfMemory(
        _ operation: Operation = .malloc, bytes: Int, file: String = #fileID, line: Int = #line
    ) -> FileError {
        FileError(
            code: .outOfMemory, operation: operation, path: nil, errno: .outOfMemory,
            reason: "out of memory for \(bytes) bytes", file: file, line: line)
    }

    /// The destination exists and overwriting was not asked for: `EEXIST` of a `create`.
    package static func destinationExists(_ path: Pathname, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.create, path: path, errno: .fileExists, file: file, line: line)
    }

    /// A directory was found where a file was needed: `EISDIR` of `operation`.
    package static func isDirectory(
        _ operation: Operation, path: Pathname, file: String = #fileID, line: Int = #line
    ) -> FileError {
        FileError(operation, path: path, errno: .isDirectory, file: file, line: line)
    }

    /// A file that must be read at random (at offsets, by `pread(2)`) is not a regular file:
    /// a FIFO, a socket or a device. `path` is the file, `reason` says why it is read so.
    package static func notRegular(
        _ path: Pathname, reason: String, file: String = #fileID, line: Int = #line
    ) -> FileError {
        FileError(code: .unsupported, operation: .read, path: path, reason: "not a regular file: \(reason)", file: file, line: line)
    }

    /// A directory would be copied into itself, as `cp` refuses it: "cannot copy a directory,
    /// 'X', into itself, 'Y'". `source` is the directory, `destination` the copy it would go
    /// into (the destination is inside the source, or the source is one of the copy's own
    /// directories or their parents, reached through a bind mount or a followed link).
    package static func copyIntoItself(
        source: Pathname, destination: Pathname, file: String = #fileID, line: Int = #line
    ) -> FileError {
        FileError(
            code: .unsupported, operation: .mkdirat, path: destination,
            reason: "cannot copy a directory, '\(source)', into itself, '\(destination)'", file: file, line: line)
    }

    /// A directory reopened through its child's `..` is not the one left (another device or
    /// inode): it was moved or replaced during the walk, as `fts(3)` detects it.
    package static func directoryChanged(_ path: Pathname, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(
            code: .unknown, operation: .openat, path: path,
            reason: "directory was moved or replaced during the walk", file: file, line: line)
    }

    /// A directory of a walk is one of the directories that contain it (`ancestor`, being
    /// walked): reached again through a followed symbolic link (`-L`) or a bind mount.
    package static func directoryCycle(
        _ path: Pathname, ancestor: Pathname, file: String = #fileID, line: Int = #line
    ) -> FileError {
        FileError(
            code: .unsupported, operation: .openat, path: path,
            reason: "directory cycle: it is '\(ancestor)', which contains it", file: file, line: line)
    }
}
