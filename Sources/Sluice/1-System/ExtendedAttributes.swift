import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A file's extended attributes (xattr(7)), names and values as bytes: `user.*`, `trusted.*`,
/// `security.*` (`security.capability`, SELinux labels) and `system.posix_acl_access` /
/// `system.posix_acl_default`, the ACLs (acl(5)): copying those raw values copies the ACLs.
///
/// Read and written on an entry of a directory without opening it (a FIFO would wait, a device
/// would be opened): through the short path `/proc/self/fd/<directory>/<name>` with the calls
/// that do not follow a symbolic link (`llistxattr(2)`, `lgetxattr(2)`, `lsetxattr(2)`), so a
/// link's own attributes are the ones read and a path never exceeds `PATH_MAX` (one component
/// of at most 255 bytes after the descriptor). Without `/proc` the calls fail with `ENOENT`.
public struct ExtendedAttributes: Sendable, Hashable {
    /// One attribute.
    public struct Attribute: Sendable, Hashable {
        /// The name with its namespace, such as `user.comment`, as bytes.
        public var name: [UInt8]
        /// The value, as bytes.
        public var value: [UInt8]

        /// Creates an attribute.
        public init(name: [UInt8], value: [UInt8]) {
            self.name = name
            self.value = value
        }

        /// The namespace: the part of the name before the first dot (`user`, `security`, ...).
        public var namespace: String {
            String(decoding: name.prefix { $0 != UInt8(ascii: ".") }, as: UTF8.self)
        }
    }

    /// The attributes, in the order the file system listed them.
    public var attributes: [Attribute]

    /// Creates a set of attributes.
    public init(_ attributes: [Attribute] = []) {
        self.attributes = attributes
    }

    /// The short path that names `name` in `directory` for the `l*xattr` calls.
    static func procPath(_ name: FilePath, in directory: DirectoryHandle) -> FilePath {
        FilePath(bytes: Array("/proc/self/fd/".utf8) + Array(String(directory.descriptor.rawValue).utf8) + [UInt8(ascii: "/")] + name.bytes)
    }

    /// Reads the attributes of the entry `name` in `directory` (of a symbolic link itself).
    ///
    /// - Returns: the attributes; none where the file system keeps none (`ENOTSUP`).
    /// - Throws: ``FileError`` (operation `listxattr` or `getxattr`) with the entry's path. An
    ///   attribute removed between the listing and its read is skipped.
    public static func read(of name: FilePath, in directory: DirectoryHandle) throws(FileError) -> ExtendedAttributes {
        let path = procPath(name, in: directory)
        let visible = directory.path.appending(name)
        var listing: [UInt8] = []
        while true {
            let size = path.withCString { llistxattr($0, nil, 0) }
            if size < 0 {
                if Errno.current == .notSupported { return ExtendedAttributes() }
                throw FileError(.listxattr, path: visible, errno: .current)
            }
            if size == 0 { return ExtendedAttributes() }
            listing = [UInt8](repeating: 0, count: size)
            let read = path.withCString { p in listing.withUnsafeMutableBytes { llistxattr(p, $0.baseAddress!.assumingMemoryBound(to: CChar.self), size) } }
            if read >= 0 {
                listing.removeLast(listing.count - read)
                break
            }
            if Errno.current != Errno(rawValue: ERANGE) { throw FileError(.listxattr, path: visible, errno: .current) }
        }
        var attributes: [Attribute] = []
        for nameBytes in listing.split(separator: 0, omittingEmptySubsequences: true) {
            let attributeName = Array(nameBytes)
            guard let value = try value(of: attributeName, at: path, visible: visible) else { continue }
            attributes.append(Attribute(name: attributeName, value: value))
        }
        return ExtendedAttributes(attributes)
    }

    /// The value of one attribute, or `nil` if it vanished (`ENODATA`).
    private static func value(of name: [UInt8], at path: FilePath, visible: FilePath) throws(FileError) -> [UInt8]? {
        let cName = name.map { CChar(bitPattern: $0) } + [0]
        while true {
            let size = path.withCString { lgetxattr($0, cName, nil, 0) }
            if size < 0 {
                if Errno.current == Errno(rawValue: ENODATA) { return nil }
                throw FileError(.getxattr, path: visible, errno: .current)
            }
            var value = [UInt8](repeating: 0, count: size)
            let read = path.withCString { p in value.withUnsafeMutableBytes { lgetxattr(p, cName, $0.baseAddress, size) } }
            if read >= 0 { return Array(value[..<read]) }
            if Errno.current == Errno(rawValue: ENODATA) { return nil }
            if Errno.current != Errno(rawValue: ERANGE) { throw FileError(.getxattr, path: visible, errno: .current) }
        }
    }

    /// The names of the ACLs (acl(5)): the access ACL of any file, and the default ACL that a
    /// directory gives what is created in it.
    static let aclNames = ["system.posix_acl_access", "system.posix_acl_default"]

    /// Removes from the entry `name` in `directory` each ACL these attributes do not hold, so
    /// that it ends with exactly the source's ACLs (none where the source had none), whatever
    /// the default ACL of its directory gave it at creation, as `cp -p` and `rsync -A` leave it.
    /// "None there" and "no ACLs on this file system" are not errors.
    ///
    /// - Returns: the ACLs that could not be removed, each with its error (operation `setxattr`).
    func removeACLsNotHeld(from name: FilePath, in directory: DirectoryHandle) -> [(Attribute, FileError)] {
        let path = Self.procPath(name, in: directory)
        let held = Set(attributes.map(\.name))
        var refused: [(Attribute, FileError)] = []
        for aclName in Self.aclNames where !held.contains(Array(aclName.utf8)) {
            guard path.withCString({ lremovexattr($0, aclName) }) != 0 else { continue }
            let error = Errno.current
            if error == Errno(rawValue: ENODATA) || error == .notSupported { continue }
            refused.append((
                Attribute(name: Array(aclName.utf8), value: []), FileError(.setxattr, path: directory.path.appending(name), errno: error)))
        }
        return refused
    }

    /// Gives the entry `name` in `directory` every attribute (`lsetxattr(2)`, creating or
    /// replacing each), one at a time: a refusal of one does not stop the others.
    ///
    /// - Returns: the attributes refused, each with its error (operation `setxattr`): for
    ///   example `ENOTSUP` where the file system keeps no extended attributes, `EPERM` for a
    ///   `security.*` or `trusted.*` name without the privilege, `EPERM` for `user.*` on a
    ///   symbolic link, which the kernel allows on regular files and directories only.
    public func write(to name: FilePath, in directory: DirectoryHandle) -> [(Attribute, FileError)] {
        let path = Self.procPath(name, in: directory)
        var refused: [(Attribute, FileError)] = []
        for attribute in attributes {
            let cName = attribute.name.map { CChar(bitPattern: $0) } + [0]
            let result = path.withCString { p in attribute.value.withUnsafeBytes { lsetxattr(p, cName, $0.baseAddress, $0.count, 0) } }
            if result != 0 {
                refused.append((attribute, FileError(.setxattr, path: directory.path.appending(name), errno: .current)))
            }
        }
        return refused
    }
}
