/// A failed file system operation: what was attempted, on which path, and why.
///
/// Modelled on NIOFS's `FileSystemError`: a broad ``code`` to switch on, the system call that
/// failed (``operation``), the ``path`` it was given, the underlying ``errno`` when there is
/// one, and the place in Sluice that threw it (``location``). Its ``description`` is one line
/// without a program prefix: `cannot open 'x': No such file or directory`.
///
/// All mapping from `errno` to codes lives in `FileError+Errno.swift`.
public struct FileError: Error, Sendable, CustomStringConvertible {
    /// A broad classification of a ``FileError``. Extensible: switch with a `default` case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The path does not exist (`ENOENT`).
        public static let notFound = Code("notFound")
        /// The caller may not do this (`EACCES`, `EPERM`, `EROFS`).
        public static let permissionDenied = Code("permissionDenied")
        /// The destination exists and overwriting was not asked for (`EEXIST`).
        public static let alreadyExists = Code("alreadyExists")
        /// A directory where a file was needed (`EISDIR`), or a file where a directory was.
        public static let isDirectory = Code("isDirectory")
        /// The source and destination are the same file (same device and inode).
        public static let sameFile = Code("sameFile")
        /// The file system or the process's file size limit is full (`ENOSPC`, `EDQUOT`, `EFBIG`).
        public static let noSpace = Code("noSpace")
        /// The device failed (`EIO`) or another I/O condition.
        public static let io = Code("io")
        /// The operation is not supported for this kind of file.
        public static let unsupported = Code("unsupported")
        /// The reader of a pipe or socket went away (`EPIPE`).
        public static let closed = Code("closed")
        /// Anything else; see ``FileError/errno``.
        public static let unknown = Code("unknown")
    }

    /// Where in Sluice an error was thrown (captured by default arguments).
    public struct Location: Hashable, Sendable, CustomStringConvertible {
        /// The source file, as `#fileID`.
        public var file: String
        /// The line in ``file``.
        public var line: Int
        public var description: String { "\(file):\(line)" }
    }

    /// The broad classification.
    public var code: Code
    /// The system call (or Sluice step) that failed: `open`, `read`, `write`, `fsync`, `rename`...
    public var operation: String
    /// The path the operation was given, if any.
    public var path: FilePath?
    /// The underlying error number, when a system call failed.
    public var errno: Errno?
    /// The human reason when there is no ``errno`` (for example "source and destination are the same file").
    public var reason: String?
    /// The place that threw it.
    public var location: Location

    /// Creates an error. Prefer the factories in `FileError+Errno.swift`.
    public init(
        code: Code, operation: String, path: FilePath?, errno: Errno? = nil, reason: String? = nil,
        file: String = #fileID, line: Int = #line
    ) {
        self.code = code
        self.operation = operation
        self.path = path
        self.errno = errno
        self.reason = reason
        self.location = Location(file: file, line: line)
    }

    /// `cannot <verb> '<path>': <reason>`, without a program prefix.
    public var description: String {
        var text = "cannot \(Self.verb(for: operation))"
        if let path { text += " '\(path)'" }
        text += ": " + (reason ?? errno?.description ?? code.description)
        return text
    }

    /// The phrase a message uses for an operation ("open", "read", "write to", ...).
    static func verb(for operation: String) -> String {
        switch operation {
        case "open": return "open"
        case "read": return "read"
        case "write": return "write to"
        case "fsync": return "sync"
        case "rename": return "replace"
        case "unlink": return "remove"
        case "stat", "fstat", "lstat": return "stat"
        case "create": return "create"
        case "copy": return "copy to"
        case "fchmod", "fchown", "futimens", "fsetxattr", "fremovexattr": return "set attributes of"
        case "close": return "close"
        case "poll": return "wait for"
        default: return operation
        }
    }
}
