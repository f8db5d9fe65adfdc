import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Setting an entry's permission bits, times and owner: `fchmodat(2)`, `utimensat(2)`,
/// `fchownat(2)`, each on the entry itself (a symbolic link is never followed).
extension DirectoryHandle {
    /// `fchmodat(2)` of `name`: Linux cannot change a symbolic link's bits (they mean nothing),
    /// so call it for other kinds of file only; it follows a link.
    ///
    /// - Throws: ``FileError`` (operation `fchmodat`).
    public func setPermissions(of name: FilePath, to permissions: UInt32) throws(FileError) {
        try call(.fchmodat, name) { fchmodat(descriptor.rawValue, $0, mode_t(permissions), 0) }
    }

    /// `utimensat(2)` of `name` with `AT_SYMLINK_NOFOLLOW`: the access and modification times,
    /// to the nanosecond the file system keeps (a link's own times, not its target's).
    ///
    /// - Throws: ``FileError`` (operation `utimensat`).
    public func setTimes(of name: FilePath, access: FileTime, modification: FileTime) throws(FileError) {
        var times = [access.timespec, modification.timespec]
        try call(.utimensat, name) { utimensat(descriptor.rawValue, $0, &times, CSluiceShims_AT_SYMLINK_NOFOLLOW) }
    }

    /// `fchownat(2)` of `name` with `AT_SYMLINK_NOFOLLOW`: any owner as root; otherwise only a
    /// group the user is in (`uid_t.max` leaves the owner as it is), else `EPERM`.
    ///
    /// - Throws: ``FileError`` (operation `fchownat`).
    public func setOwner(of name: FilePath, user: UInt32, group: UInt32) throws(FileError) {
        try call(.fchownat, name) { fchownat(descriptor.rawValue, $0, user, group, CSluiceShims_AT_SYMLINK_NOFOLLOW) }
    }
}
