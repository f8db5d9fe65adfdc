import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Setting an entry's permission bits, times and owner: `fchmodat(2)`, `utimensat(2)`,
/// `fchownat(2)`, each on the entry itself (a symbolic link is never followed); and the
/// directory's own, through its descriptor, which no rename or planted link can redirect.
extension DirectoryHandle {
    /// `fchmodat2(2)` of `name` with `AT_SYMLINK_NOFOLLOW` (the C library's emulation on
    /// kernels before 6.6): the entry itself, never what a link put in its place points to. Linux cannot change a symbolic link's bits (they mean
    /// nothing): for a link the call fails with `EOPNOTSUPP`, so call it for other kinds only.
    ///
    /// - Throws: ``FileError`` (operation `fchmodat`).
    package func setPermissions(of name: Pathname, to permissions: UInt32) throws(FileError) {
        try call(.fchmodat, name) { system.setPermissionsAt(descriptor.rawValue, $0, mode_t(permissions)) }
    }

    /// `fchmod(2)` of this directory, through its descriptor.
    ///
    /// - Throws: ``FileError`` (operation `fchmod`).
    func setPermissions(to permissions: UInt32) throws(FileError) {
        try callOnSelf(.fchmod) { system.setPermissions(descriptor.rawValue, mode_t(permissions)) }
    }

    /// `futimens(3)` of this directory, through its descriptor.
    ///
    /// - Throws: ``FileError`` (operation `futimens`).
    func setTimes(access: FileTime, modification: FileTime) throws(FileError) {
        let times = [access.timespec, modification.timespec]
        try callOnSelf(.futimens) { system.setTimes(descriptor.rawValue, times) }
    }

    /// `fchownat(2)` of this directory's descriptor (`AT_EMPTY_PATH`), with the rules of
    /// ``setOwner(of:user:group:)``.
    ///
    /// - Throws: ``FileError`` (operation `fchownat`).
    func setOwner(user: UInt32, group: UInt32) throws(FileError) {
        try callOnSelf(.fchownat) { system.setOwner(descriptor.rawValue, user, group) }
    }

    private func callOnSelf(_ operation: FileError.Operation, _ body: () -> Result<Void, ErrorNumber>) throws(FileError) {
        if case .failure(let error) = ErrorNumber.retryingInterrupts(body) {
            throw FileError(operation, path: path, errno: error)
        }
    }

    /// `utimensat(2)` of `name` with `AT_SYMLINK_NOFOLLOW`: the access and modification times,
    /// to the nanosecond the file system keeps (a link's own times, not its target's).
    ///
    /// - Throws: ``FileError`` (operation `utimensat`).
    package func setTimes(of name: Pathname, access: FileTime, modification: FileTime) throws(FileError) {
        let times = [access.timespec, modification.timespec]
        try call(.utimensat, name) { system.setTimesAt(descriptor.rawValue, $0, times) }
    }

    /// `fchownat(2)` of `name` with `AT_SYMLINK_NOFOLLOW`: any owner as root; otherwise only a
    /// group the user is in (`uid_t.max` leaves the owner as it is), else `EPERM`.
    ///
    /// - Throws: ``FileError`` (operation `fchownat`).
    package func setOwner(of name: Pathname, user: UInt32, group: UInt32) throws(FileError) {
        try call(.fchownat, name) { system.setOwnerAt(descriptor.rawValue, $0, user, group) }
    }
}
