import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The real calls behind the attribute and durability entries of ``SystemCalls``.
extension SystemCalls {
    /// A call that returns 0 or -1 with `errno`, as a `Result`.
    private static func checked(_ result: CInt) -> Result<Void, ErrorNumber> {
        result < 0 ? .failure(.current) : .success(())
    }

    static let liveSetPermissions: @Sendable (CInt, mode_t) -> Result<Void, ErrorNumber> = { checked(fchmod($0, $1)) }

    static let liveSetOwner: @Sendable (CInt, uid_t, gid_t) -> Result<Void, ErrorNumber> = {
        checked(fchownat($0, "", $1, $2, CSluiceShims_AT_EMPTY_PATH))
    }

    static let liveSetTimes: @Sendable (CInt, UnsafePointer<timespec>) -> Result<Void, ErrorNumber> = { checked(futimens($0, $1)) }

    static let liveSetExtendedAttribute: @Sendable (CInt, UnsafePointer<CChar>, UnsafeRawBufferPointer) -> Result<Void, ErrorNumber> = {
        checked(fsetxattr($0, $1, $2.baseAddress, $2.count, 0))
    }

    static let liveRemoveExtendedAttribute: @Sendable (CInt, UnsafePointer<CChar>) -> Result<Void, ErrorNumber> = {
        checked(fremovexattr($0, $1))
    }

    static let liveSetEntryExtendedAttribute: @Sendable (UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafeRawBufferPointer)
        -> Result<Void, ErrorNumber> = { checked(lsetxattr($0, $1, $2.baseAddress, $2.count, 0)) }

    static let liveRemoveEntryExtendedAttribute: @Sendable (UnsafePointer<CChar>, UnsafePointer<CChar>) -> Result<Void, ErrorNumber> = {
        checked(lremovexattr($0, $1))
    }

    static let liveSetPermissionsAt: @Sendable (CInt, UnsafePointer<CChar>, mode_t) -> Result<Void, ErrorNumber> = {
        checked(CSluiceShims_fchmodat_nofollow($0, $1, $2))
    }

    static let liveSetTimesAt: @Sendable (CInt, UnsafePointer<CChar>, UnsafePointer<timespec>) -> Result<Void, ErrorNumber> = {
        checked(utimensat($0, $1, $2, CSluiceShims_AT_SYMLINK_NOFOLLOW))
    }

    static let liveSetOwnerAt: @Sendable (CInt, UnsafePointer<CChar>, uid_t, gid_t) -> Result<Void, ErrorNumber> = {
        checked(fchownat($0, $1, $2, $3, CSluiceShims_AT_SYMLINK_NOFOLLOW))
    }

    static let liveMakeSymbolicLinkAt: @Sendable (UnsafePointer<CChar>, CInt, UnsafePointer<CChar>) -> Result<Void, ErrorNumber> = {
        checked(symlinkat($0, $1, $2))
    }

    static let liveMakeNodeAt: @Sendable (CInt, UnsafePointer<CChar>, mode_t, dev_t) -> Result<Void, ErrorNumber> = {
        checked(mknodat($0, $1, $2, $3))
    }

    static let liveSynchronizeFileSystem: @Sendable (CInt) -> Result<Void, ErrorNumber> = { checked(syncfs($0)) }

    static let liveSynchronizeFileRange: @Sendable (CInt, CUnsignedInt) -> Result<Void, ErrorNumber> = {
        checked(sync_file_range($0, 0, 0, $1))
    }

    static let liveStatus: @Sendable (CInt) -> Result<stat, ErrorNumber> = { descriptor in
        var raw = stat()
        return fstat(descriptor, &raw) < 0 ? .failure(.current) : .success(raw)
    }
}
