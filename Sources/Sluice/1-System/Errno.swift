#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An error number reported by a system call (`errno(3)`).
///
/// A small value type over the C `errno` value; the constants use swift-system's names.
/// Its ``description`` is the C library's text for the number (`strerror(3)`).
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The raw C `errno` value.
    public var rawValue: CInt

    /// Wraps a raw C `errno` value.
    public init(rawValue: CInt) {
        self.rawValue = rawValue
    }

    /// The calling thread's current `errno`.
    @usableFromInline
    static var current: Errno { Errno(rawValue: errno) }

    /// The C library's message for this number, e.g. "No such file or directory".
    public var description: String {
        guard let text = strerror(rawValue) else { return "error \(rawValue)" }
        return String(cString: text)
    }

    /// `EPERM`: operation not permitted.
    public static let notPermitted = Errno(rawValue: EPERM)
    /// `ETXTBSY`: text file busy.
    package static let textFileBusy = Errno(rawValue: ETXTBSY)
    /// `ENOENT`: no such file or directory.
    public static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
    /// `EINTR`: interrupted system call.
    public static let interrupted = Errno(rawValue: EINTR)
    /// `EIO`: input/output error.
    public static let ioError = Errno(rawValue: EIO)
    /// `EBADF`: bad file descriptor.
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    /// `EAGAIN`: resource temporarily unavailable.
    public static let resourceTemporarilyUnavailable = Errno(rawValue: EAGAIN)
    /// `EACCES`: permission denied.
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// `EEXIST`: file exists.
    public static let fileExists = Errno(rawValue: EEXIST)
    /// `EXDEV`: cross-device link.
    public static let improperLink = Errno(rawValue: EXDEV)
    /// `ENOTDIR`: not a directory.
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    /// `EISDIR`: is a directory.
    public static let isDirectory = Errno(rawValue: EISDIR)
    /// `EINVAL`: invalid argument.
    public static let invalidArgument = Errno(rawValue: EINVAL)
    /// `EFBIG`: file too large.
    public static let fileTooLarge = Errno(rawValue: EFBIG)
    /// `ENOSPC`: no space left on device.
    public static let noSpace = Errno(rawValue: ENOSPC)
    /// `EDQUOT`: disk quota exceeded.
    public static let diskQuotaExceeded = Errno(rawValue: EDQUOT)
    /// `EROFS`: read-only file system.
    public static let readOnlyFileSystem = Errno(rawValue: EROFS)
    /// `EPIPE`: broken pipe (the reader went away).
    public static let brokenPipe = Errno(rawValue: EPIPE)
    /// `ENAMETOOLONG`: file name too long.
    public static let fileNameTooLong = Errno(rawValue: ENAMETOOLONG)
    /// `ELOOP`: too many levels of symbolic links.
    public static let tooManySymbolicLinkLevels = Errno(rawValue: ELOOP)
    /// `ENOTSUP`: operation not supported.
    public static let notSupported = Errno(rawValue: ENOTSUP)
    /// `ENXIO`: no such device or address (`lseek(2)` with `SEEK_DATA` past the last data).
    public static let noSuchAddressOrDevice = Errno(rawValue: ENXIO)
    /// `ENOSYS`: function not implemented.
    public static let noFunction = Errno(rawValue: ENOSYS)
    /// `ENOTTY`: inappropriate ioctl for device.
    public static let inappropriateIOCTLForDevice = Errno(rawValue: ENOTTY)
}
