/// The one place that maps `errno` values to ``FileError`` codes.
extension FileError {
    /// The ``Code`` for an error number.
    public static func code(for errno: Errno) -> Code {
        switch errno {
        case .noSuchFileOrDirectory: return .notFound
        case .permissionDenied, .notPermitted, .readOnlyFileSystem: return .permissionDenied
        case .fileExists: return .alreadyExists
        case .isDirectory, .notDirectory: return .isDirectory
        case .noSpace, .diskQuotaExceeded, .fileTooLarge: return .noSpace
        case .ioError: return .io
        case .brokenPipe: return .closed
        case .notSupported, .invalidArgument, .improperLink: return .unsupported
        default: return .unknown
        }
    }

    /// A system call on `path` failed with `errno`.
    ///
    /// - Parameters:
    ///   - operation: the system call's name (`open`, `read`, `write`, `fsync`, `rename`, ...).
    ///   - path: the path the call was about, if any.
    ///   - errno: what the call reported.
    public static func system(
        _ operation: String, path: FilePath?, errno: Errno, file: String = #fileID, line: Int = #line
    ) -> FileError {
        FileError(code: code(for: errno), operation: operation, path: path, errno: errno, file: file, line: line)
    }

    /// The source and the destination are one file (same device and inode).
    public static func sameFile(destination: FilePath, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(
            code: .sameFile, operation: "write", path: destination,
            reason: "source and destination are the same file", file: file, line: line)
    }

    /// The destination exists and overwriting was not asked for (`--force`).
    public static func destinationExists(_ path: FilePath, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(
            code: .alreadyExists, operation: "create", path: path, errno: .fileExists,
            reason: "File exists (use --force to overwrite)", file: file, line: line)
    }

    /// A directory was found where a file was needed.
    public static func isDirectory(
        _ operation: String, path: FilePath, file: String = #fileID, line: Int = #line
    ) -> FileError {
        FileError(code: .isDirectory, operation: operation, path: path, errno: .isDirectory, file: file, line: line)
    }
}
