#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a system call failed (`errno(3)`): what a ``FileError`` carries, for a caller that
/// tells `ENOSPC` from `EACCES` (or reads ``FileError/code``, its portable summary).
///
/// A small value type over the C `errno` value; the constants use swift-system's names.
/// Its ``description`` is the C library's text for the number (`strerror(3)`).
public struct ErrorNumber: Error, Hashable, Sendable, CustomStringConvertible {
    /// The raw C `errno` value.
    public var rawValue: CInt

    /// Wraps a raw C `errno` value.
    public init(rawValue: CInt) {
        self.rawValue = rawValue
    }

    /// The calling thread's current `errno`.
    @usableFromInline
    static var current: ErrorNumber { ErrorNumber(rawValue: errno) }

    /// The C library's message for this number, e.g. "No such file or directory".
    public var description: String {
        guard let text = strerror(rawValue) else { return "error \(rawValue)" }
        return String(cString: text)
    }

    /// `EPERM`: operation not permitted.
    public static let notPermitted = ErrorNumber(rawValue: EPERM)
    /// `ETXTBSY`: text file busy.
    package static let textFileBusy = ErrorNumber(rawValue: ETXTBSY)
    /// `ENOENT`: no such file or directory.
    public static let noSuchFileOrDirectory = ErrorNumber(rawValue: ENOENT)
    /// `EINTR`: interrupted system call.
    public static let interrupted = ErrorNumber(rawValue: EINTR)
    /// `EIO`: input/output error.
    public static let ioError = ErrorNumber(rawValue: EIO)
    /// `EBADF`: bad file descriptor.
    public static let badFileDescriptor = ErrorNumber(rawValue: EBADF)
    /// `EAGAIN`: resource temporarily unavailable.
    public static let resourceTemporarilyUnavailable = ErrorNumber(rawValue: EAGAIN)
    /// `EACCES`: permission denied.
    public static let permissionDenied = ErrorNumber(rawValue: EACCES)
    /// `EEXIST`: file exists.
    public static let fileExists = ErrorNumber(rawValue: EEXIST)
    /// `EXDEV`: cross-device link.
    public static let improperLink = ErrorNumber(rawValue: EXDEV)
    /// `ENOTDIR`: not a directory.
    public static let notDirectory = ErrorNumber(rawValue: ENOTDIR)
    /// `EISDIR`: is a directory.
    public static let isDirectory = ErrorNumber(rawValue: EISDIR)
    /// `EINVAL`: invalid argument.
    public static let invalidArgument = ErrorNumber(rawValue: EINVAL)
    /// `EFBIG`: file too large.
    public static let fileTooLarge = ErrorNumber(rawValue: EFBIG)
    /// `ENOSPC`: no space left on device.
    public static let noSpace = ErrorNumber(rawValue: ENOSPC)
    /// `EDQUOT`: disk quota exceeded.
    public static let diskQuotaExceeded = ErrorNumber(rawValue: EDQUOT)
    /// `EROFS`: read-only file system.
    public static let readOnlyFileSystem = ErrorNumber(rawValue: EROFS)
    /// `EPIPE`: broken pipe (the reader went away).
    public static let brokenPipe = ErrorNumber(rawValue: EPIPE)
    /// `ENAMETOOLONG`: file name too long.
    public static let fileNameTooLong = ErrorNumber(rawValue: ENAMETOOLONG)
    /// `ELOOP`: too many levels of symbolic links.
    public static let tooManySymbolicLinkLevels = ErrorNumber(rawValue: ELOOP)
    /// `ENOTSUP`: operation not supported.
    public static let notSupported = ErrorNumber(rawValue: ENOTSUP)
    /// `ENXIO`: no such device or address (`lseek(2)` with `SEEK_DATA` past the last data).
    public static let noSuchAddressOrDevice = ErrorNumber(rawValue: ENXIO)
    /// `ENOSYS`: function not implemented.
    public static let noFunction = ErrorNumber(rawValue: ENOSYS)
    /// `ENOTTY`: inappropriate ioctl for device.
    public static let inappropriateIOCTLForDevice = ErrorNumber(rawValue: ENOTTY)
}

/// The name of ``ErrorNumber`` before 0.2, which swift-system's `Errno` shares.
@available(*, unavailable, renamed: "ErrorNumber")
public typealias Errno = ErrorNumber
