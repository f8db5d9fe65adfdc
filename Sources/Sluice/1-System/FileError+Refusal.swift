/// The errors of Sluice's own rules: refusals that no system call reported.
extension FileError {
    /// The source and the destination are one file (same device and inode).
    public static func sameFile(destination: FilePath, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(
            code: .sameFile, operation: .write, path: destination,
            reason: "source and destination are the same file", file: file, line: line)
    }

    /// The destination exists and overwriting was not asked for: `EEXIST` of a `create`.
    public static func destinationExists(_ path: FilePath, file: String = #fileID, line: Int = #line) -> FileError {
        FileError(.create, path: path, errno: .fileExists, file: file, line: line)
    }

    /// A directory was found where a file was needed: `EISDIR` of `operation`.
    public static func isDirectory(
        _ operation: Operation, path: FilePath, file: String = #fileID, line: Int = #line
    ) -> FileError {
        FileError(operation, path: path, errno: .isDirectory, file: file, line: line)
    }
}
