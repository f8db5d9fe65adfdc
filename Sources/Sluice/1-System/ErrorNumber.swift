#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a system call failed (`errno(3)`): what a ``FileError`` carries, for a caller that
/// tells `ENOSPC` from `EACCES` (or reads ``FileError/code``, its portable summary).
///
/// A small value type over the C `errno` value: compare its ``rawValue`` with the C library's
/// constants (`error.errno?.rawValue == ENOSPC`). Its ``description`` is the C library's text
/// for the number (`strerror(3)`).
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
    package static let notPermitted = ErrorNumber(rawValue: EPERM)
    /// `ETXTBSY`: text file busy.
    package static let textFileBusy = ErrorNumber(rawValue: ETXTBSY)
    /// `ENOENT`: no such file or directory.
    package static let noSuchFileOrDirectory = ErrorNumber(rawValue: ENOENT)
    /// `EINTR`: interrupted system call.
    @usableFromInline
    package static let interrupted = ErrorNumber(rawValue: EINTR)
    /// `EIO`: input/output error.
    package static let ioError = ErrorNumber(rawValue: EIO)
    /// `EBADF`: bad file descriptor.
    package static let badFileDescriptor = ErrorNumber(rawValue: EBADF)
    /// `EAGAIN`: resource temporarily unavailable.
    package static let resourceTemporarilyUnavailable = ErrorNumber(rawValue: EAGAIN)
    /// `EACCES`: permission denied.
    package static let permissionDenied = ErrorNumber(rawValue: EACCES)
    /// `EEXIST`: file exists.
    package static let fileExists = ErrorNumber(rawValue: EEXIST)
    /// `EXDEV`: cross-device link.
    package static let improperLink = ErrorNumber(rawValue: EXDEV)
    /// `ENOTDIR`: not a directory.
    package static let notDirectory = ErrorNumber(rawValue: ENOTDIR)
    /// `EISDIR`: is a directory.
    package static let isDirectory = ErrorNumber(rawValue: EISDIR)
    /// `EINVAL`: invalid argument.
    package static let invalidArgument = ErrorNumber(rawValue: EINVAL)
    /// `EFBIG`: file too large.
    package static let fileTooLarge = ErrorNumber(rawValue: EFBIG)
    /// `ENOSPC`: no space left on device.
    package static let noSpace = ErrorNumber(rawValue: ENOSPC)
    /// `ENOMEM`: out of memory, or of address space (`ulimit -v`).
    package static let outOfMemory = ErrorNumber(rawValue: ENOMEM)
    /// `EDQUOT`: disk quota exceeded.
    package static let diskQuotaExceeded = ErrorNumber(rawValue: EDQUOT)
    /// `EROFS`: read-only file system.
    package static let readOnlyFileSystem = ErrorNumber(rawValue: EROFS)
    /// `EPIPE`: broken pipe (the reader went away).
    package static let brokenPipe = ErrorNumber(rawValue: EPIPE)
    /// `ENAMETOOLONG`: file name too long.
    package static let fileNameTooLong = ErrorNumber(rawValue: ENAMETOOLONG)
    /// `ELOOP`: too many levels of symbolic links.
    package static let tooManySymbolicLinkLevels = ErrorNumber(rawValue: ELOOP)
    /// `ENOTSUP`: operation not supported.
    package static let notSupported = ErrorNumber(rawValue: ENOTSUP)
    /// `ENXIO`: no such device or address (`lseek(2)` with `SEEK_DATA` past the last data).
    package static let noSuchAddressOrDevice = ErrorNumber(rawValue: ENXIO)
    /// `ENOSYS`: function not implemented.
    package static let noFunction = ErrorNumber(rawValue: ENOSYS)
    /// `ENOTTY`: inappropriate ioctl for device.
    package static let inappropriateIOCTLForDevice = ErrorNumber(rawValue: ENOTTY)
}
