import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The system calls behind the owner and the access ACL that ``FileSink`` gives a new file.
extension FileSink {
    /// The name of the access ACL's extended attribute (acl(5)).
    static let accessACLName = "system.posix_acl_access"

    /// The access ACL of `path` (the `system.posix_acl_access` extended attribute, acl(5)), or
    /// `nil` if it has none or the file system keeps none.
    static func accessACL(of path: Pathname) -> [UInt8]? {
        let size = path.withCString { getxattr($0, accessACLName, nil, 0) }
        guard size > 0 else { return nil }
        var value = [UInt8](repeating: 0, count: size)
        let read = path.withCString { getxattr($0, accessACLName, &value, size) }
        return read > 0 ? Array(value[..<read]) : nil
    }

    /// The access ACL of the file open as `descriptor` (`fgetxattr(2)`), or `nil` if it has none
    /// or the file system keeps none.
    static func accessACL(of descriptor: Descriptor) -> [UInt8]? {
        let size = fgetxattr(descriptor.rawValue, accessACLName, nil, 0)
        guard size > 0 else { return nil }
        var value = [UInt8](repeating: 0, count: size)
        let read = fgetxattr(descriptor.rawValue, accessACLName, &value, size)
        return read > 0 ? Array(value[..<read]) : nil
    }

    /// Gives the file `acl` as its access ACL, or removes the one it has when `acl` is `nil` (a
    /// default ACL of the directory gave the new file one that the replaced file had not).
    ///
    /// - Parameters:
    ///   - acl: the replaced file's access ACL, or `nil` for none.
    ///   - descriptor: the new file.
    ///   - path: the name errors use (the destination).
    /// - Throws: ``FileError`` (`fsetxattr`, or `fremovexattr` for anything but "no ACL" and
    ///   "no ACLs on this file system").
    static func setAccessACL(_ acl: [UInt8]?, on descriptor: Descriptor, path: Pathname, system: SystemCalls) throws(FileError) {
        if let acl {
            if case .failure(let error) = acl.withUnsafeBytes({ system.setExtendedAttribute(descriptor.rawValue, accessACLName, $0) }) {
                throw FileError.fsetxattr(path: path, errno: error)
            }
        } else if case .failure(let error) = system.removeExtendedAttribute(descriptor.rawValue, accessACLName) {
            if error != ErrorNumber(rawValue: ENODATA) && error != ErrorNumber(rawValue: EOPNOTSUPP) {
                throw FileError.fremovexattr(path: path, errno: error)
            }
        }
    }

    /// The access and modification times `futimens(2)` gives the file from `source`: both
    /// with `preservesAttributes`, the modification time alone (the access time `UTIME_OMIT`)
    /// with `preservesModificationTime`; `nil` when none is kept or `source` is not a regular
    /// file (a pipe's times say nothing of its data).
    static func timesToKeep(of source: FileStatus?, options: Options) -> [timespec]? {
        guard let source, source.kind == .regular else { return nil }
        if options.preservesAttributes { return [source.accessTime.timespec, source.modificationTime.timespec] }
        guard options.preservesModificationTime else { return nil }
        return [timespec(tv_sec: 0, tv_nsec: CSluiceShims_UTIME_OMIT), source.modificationTime.timespec]
    }

    /// Gives the file `model`'s owner and group where permitted (`fchown(2)`: any as root; the
    /// user's own with a group the user is in otherwise), else its group alone.
    ///
    /// - Returns: whether both owner and group are `model`'s now.
    static func keepOwner(_ model: FileStatus, on descriptor: Descriptor, system: SystemCalls) -> Bool {
        guard let current = try? descriptor.status() else { return false }
        if current.userID == model.userID && current.groupID == model.groupID { return true }
        if case .success = system.setOwner(descriptor.rawValue, model.userID, model.groupID) { return true }
        if current.groupID != model.groupID { _ = system.setOwner(descriptor.rawValue, uid_t.max, model.groupID) }
        return false
    }
}
