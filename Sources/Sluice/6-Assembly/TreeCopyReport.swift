/// What a ``TreeCopy`` did, for its caller's summary and exit status: the entries of each kind
/// made, the bytes, the entries that failed and the attributes that could not be kept.
public struct TreeCopyReport: Sendable {
    /// Regular files committed.
    public var files = 0
    /// Directories created (or merged into).
    public var directories = 0
    /// Symbolic links created.
    public var symbolicLinks = 0
    /// Hard links made to a file copied earlier in the run.
    public var hardLinks = 0
    /// FIFOs, devices and sockets created.
    public var specialFiles = 0
    /// Bytes of regular files read.
    public var bytes: Int64 = 0
    /// The count of entries that failed (each was reported to `onFailure`).
    public var failures = 0
    /// The attributes not kept, one message per kind, and other warnings of files.
    public var warnings: [String] = []
    /// The directories that regular files were renamed into but that could not be synced
    /// (`fsync(2)` failed), with the error: those files are complete but may not survive a
    /// crash. Empty when every file is durable (or syncing is off).
    public var unsyncedDirectories: [Pathname: FileError] = [:]

    /// Creates an empty report.
    package init() {}
}
