#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The one place that maps `errno` values to ``FileError`` codes.
extension FileError {
    /// The ``Code`` for an error number.
    package static func code(for errno: ErrorNumber) -> Code {
        switch errno {
        case .noSuchFileOrDirectory: return .notFound
        case .permissionDenied, .notPermitted, .readOnlyFileSystem: return .permissionDenied
        case .fileExists: return .alreadyExists
        case .isDirectory, .notDirectory: return .isDirectory
        case .noSpace, .diskQuotaExceeded, .fileTooLarge: return .noSpace
        case .ioError: return .io
        case .outOfMemory: return .outOfMemory
        case .brokenPipe: return .closed
        case .notSupported, .invalidArgument, .improperLink: return .unsupported
        default: return .unknown
        }
    }

    /// `operation` on `path` failed with `errno`; the code is ``code(for:)``'s. Every factory
    /// for an error number goes through it.
    init(
        _ operation: Operation, path: Pathname?, errno: ErrorNumber, cause: (any Error)? = nil, file: String = #fileID,
        line: Int = #line
    ) {
        self.init(
            code: Self.code(for: errno), operation: operation, path: path, errno: errno, cause: cause,
            file: file, line: line)
    }

    /// Whether the error is the process's (`EMFILE`) or the system's (`ENFILE`) limit on open
    /// files: an open that may succeed once descriptors are released.
    var isDescriptorExhaustion: Bool {
        errno == ErrorNumber(rawValue: EMFILE) || errno == ErrorNumber(rawValue: ENFILE)
    }
}
