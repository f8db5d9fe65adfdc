/// A failed file system operation: what was attempted, on which path, and why.
///
/// Modelled on NIOFS's `FileSystemError`: a broad ``code`` to switch on, the system call that
/// failed (``operation``), the ``path`` it was given, the underlying ``errno`` when there is
/// one, and the error that led to this one (``cause``) when there is one. Handle it by its
/// ``code``; ``operation`` and ``errno`` are for messages and logs. Its ``description`` is one line without a program prefix:
/// `cannot open 'x': No such file or directory`.
///
/// Errors are made by factories: one per system call (`FileError+Syscall.swift`, such as
/// `open(path:errno:file:line:)`), whose ``code`` comes from the `errno` in one place
/// (`code(for:)`), and one per refusal by Sluice's own rules (`FileError+Refusal.swift`, such
/// as `sameFile(destination:file:line:)`).
///
/// Concurrency contract: a `Sendable` value; it may cross any concurrency domain.
public struct FileError: Error, Sendable, CustomStringConvertible {
    /// A broad classification of a ``FileError``. Extensible: switch with a `default` case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        /// The code's name, such as `notFound`.
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
        /// Memory, or address space (`ulimit -v`), ran out for a buffer Sluice sized (`ENOMEM`).
        public static let outOfMemory = Code("outOfMemory")
        /// The reader of a pipe or socket went away (`EPIPE`).
        public static let closed = Code("closed")
        /// Anything else; see ``FileError/errno``.
        public static let unknown = Code("unknown")
    }

    /// Where in Sluice an error was thrown (captured by default arguments).
    package struct Location: Hashable, Sendable, CustomStringConvertible {
        /// The source file, as `#fileID`.
        package var file: String
        /// The line in ``file``.
        package var line: Int
        /// `file:line`.
        package var description: String { "\(file):\(line)" }
    }

    /// The broad classification.
    public var code: Code
    /// The system call (or step of Sluice's own) that failed.
    public var operation: Operation
    /// The path the operation was given, if any.
    public var path: Pathname?
    /// The underlying error number, when a system call failed.
    public var errno: ErrorNumber?
    /// Why Sluice refused, when no ``errno`` says it (for example "source and destination are
    /// the same file").
    public var reason: String?
    /// The error that led to this one, if any: for example the failure of a call on a temporary
    /// file that this error reports under its destination's name. The ``description`` shows it
    /// only when there is neither ``reason`` nor ``errno``.
    public var cause: (any Error)?
    /// The place in Sluice that threw it (for Sluice's own tests and bug reports).
    package var location: Location

    /// Creates an error. Sluice's own code uses the factories (`FileError+Syscall.swift`,
    /// `FileError+Refusal.swift`), which derive ``code`` from ``errno``.
    ///
    /// - Parameters:
    ///   - code: the broad classification.
    ///   - operation: what failed.
    ///   - path: the path it was given, if any.
    ///   - errno: what the system call reported, if one failed.
    ///   - reason: why Sluice refused, when no `errno` says it.
    ///   - cause: the error that led to this one, if any.
    ///   - file: the caller's `#fileID`, for ``location``.
    ///   - line: the caller's line, for ``location``.
    package init(
        code: Code, operation: Operation, path: Pathname?, errno: ErrorNumber? = nil, reason: String? = nil,
        cause: (any Error)? = nil, file: String = #fileID, line: Int = #line
    ) {
        self.code = code
        self.operation = operation
        self.path = path
        self.errno = errno
        self.reason = reason
        self.cause = cause
        self.location = Location(file: file, line: line)
    }

    /// `cannot <verb> '<path>': <reason>`, without a program prefix. The reason is ``reason``,
    /// else ``errno``'s text, else ``cause``, else ``code``. The path `-` of a read or a write is
    /// named as `cp` and `cat` name it: `standard input`, `standard output`.
    public var description: String {
        var text = "cannot \(operation.verb)"
        switch (path, operation) {
        case ("-"?, .read): text += " standard input"
        case ("-"?, .write): text += " standard output"
        case (let path?, _): text += " '\(path)'"
        case (nil, _): break
        }
        text += ": " + (reason ?? errno?.description ?? cause.map { "\($0)" } ?? code.description)
        return text
    }
}
