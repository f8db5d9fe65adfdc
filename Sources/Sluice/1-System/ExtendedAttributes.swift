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
/// Read and written on an open file through its descriptor (`flistxattr(2)`, `fgetxattr(2)`,
/// `fsetxattr(2)`: a regular file's temporary, a directory), or on an entry of a directory
/// without opening it (a FIFO would wait, a device would be opened): through the short path
/// `/proc/self/fd/<directory>/<name>` with the calls that do not follow a symbolic link
/// (`llistxattr(2)`, `lgetxattr(2)`, `lsetxattr(2)`), so a link's own attributes are the ones
/// read and a path never exceeds `PATH_MAX` (one component of at most 255 bytes after the
/// descriptor). Without `/proc` the calls on an entry fail with `ENOENT`.
package struct ExtendedAttributes: Sendable, Hashable {
    /// One attribute.
    package struct Attribute: Sendable, Hashable {
        /// The name with its namespace, such as `user.comment`, as bytes.
        package var name: [UInt8]
        /// The value, as bytes.
        package var value: [UInt8]

        /// Creates an attribute.
        package init(name: [UInt8], value: [UInt8]) {
            self.name = name
            self.value = value
        }

        /// What warnings call a refused attribute: `ACLs` for `system.posix_acl_*`, else
        /// `extended attributes (<namespace>.*)`.
        var kind: String {
            namespace == "system" ? "ACLs" : "extended attributes (\(namespace).*)"
        }

        /// The namespace: the part of the name before the first dot (`user`, `security`, ...).
        package var namespace: String {
            String(decoding: name.prefix { $0 != UInt8(ascii: ".") }, as: UTF8.self)
        }
    }

    /// The attributes, in the order the file system listed them.
    package var attributes: [Attribute]

    /// Creates a set of attributes.
    package init(_ attributes: [Attribute] = []) {
        self.attributes = attributes
    }

    /// What the calls act on: an entry of an open directory, through its short path and the
    /// calls that do not follow a symbolic link (`l*xattr`), or an open file (`f*xattr`).
    enum Target {
        case entry(Pathname)
        case descriptor(CInt)

        init(_ name: Pathname, in directory: DirectoryHandle) {
            self = .entry(ExtendedAttributes.procPath(name, in: directory))
        }

        func list(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int) -> Int {
            switch self {
            case .entry(let path): path.withCString { llistxattr($0, buffer, size) }
            case .descriptor(let descriptor): flistxattr(descriptor, buffer, size)
            }
        }

        func get(_ name: UnsafePointer<CChar>, _ value: UnsafeMutableRawPointer?, _ size: Int) -> Int {
            switch self {
            case .entry(let path): path.withCString { lgetxattr($0, name, value, size) }
            case .descriptor(let descriptor): fgetxattr(descriptor, name, value, size)
            }
        }

        /// Sets one attribute through `system`'s `lsetxattr` or `fsetxattr`: `nil`, or the error.
        func set(_ name: UnsafePointer<CChar>, _ value: UnsafeRawBufferPointer, system: SystemCalls) -> ErrorNumber? {
            let result = switch self {
            case .entry(let path): path.withCString { system.setEntryExtendedAttribute($0, name, value) }
            case .descriptor(let descriptor): system.setExtendedAttribute(descriptor, name, value)
            }
            if case .failure(let error) = result { return error }
            return nil
        }

        /// Removes one attribute through `system`'s `lremovexattr` or `fremovexattr`: `nil`, or the error.
        func remove(_ name: UnsafePointer<CChar>, system: SystemCalls) -> ErrorNumber? {
            let result = switch self {
            case .entry(let path): path.withCString { system.removeEntryExtendedAttribute($0, name) }
            case .descriptor(let descriptor): system.removeExtendedAttribute(descriptor, name)
            }
            if case .failure(let error) = result { return error }
            return nil
        }
    }

    /// The short path that names `name` in `directory` for the `l*xattr` calls.
    static func procPath(_ name: Pathname, in directory: DirectoryHandle) -> Pathname {
        Pathname(bytes: Array("/proc/self/fd/".utf8) + Array(String(directory.descriptor.rawValue).utf8) + [UInt8(ascii: "/")] + name.bytes)
    }

    /// Reads the attributes of the entry `name` in `directory` (of a symbolic link itself).
    ///
    /// - Returns: the attributes; none where the file system keeps none (`ENOTSUP`).
    /// - Throws: ``FileError`` (operation `listxattr` or `getxattr`) with the entry's path. An
    ///   attribute removed between the listing and its read is skipped.
    package static func read(of name: Pathname, in directory: DirectoryHandle) throws(FileError) -> ExtendedAttributes {
        try read(Target(name, in: directory), path: directory.path.appending(name))
    }

    /// Reads the attributes of the file open as `descriptor` (`flistxattr(2)`, `fgetxattr(2)`);
    /// `path` names it in errors. As ``read(of:in:)``.
    static func read(of descriptor: Descriptor, path: Pathname) throws(FileError) -> ExtendedAttributes {
        try read(.descriptor(descriptor.rawValue), path: path)
    }

    private static func read(_ target: Target, path visible: Pathname) throws(FileError) -> ExtendedAttributes {
        var listing: [UInt8] = []
        while true {
            let size = target.list(nil, 0)
            if size < 0 {
                if ErrorNumber.current == .notSupported { return ExtendedAttributes() }
                throw FileError(.listxattr, path: visible, errno: .current)
            }
            if size == 0 { return ExtendedAttributes() }
            listing = [UInt8](repeating: 0, count: size)
            let read = listing.withUnsafeMutableBytes { target.list($0.baseAddress!.assumingMemoryBound(to: CChar.self), size) }
            if read >= 0 {
                listing.removeLast(listing.count - read)
                break
            }
            if ErrorNumber.current != ErrorNumber(rawValue: ERANGE) { throw FileError(.listxattr, path: visible, errno: .current) }
        }
        var attributes: [Attribute] = []
        for nameBytes in listing.split(separator: 0, omittingEmptySubsequences: true) {
            let attributeName = Array(nameBytes)
            guard let value = try value(of: attributeName, at: target, visible: visible) else { continue }
            attributes.append(Attribute(name: attributeName, value: value))
        }
        return ExtendedAttributes(attributes)
    }

    /// The value of one attribute, or `nil` if it vanished (`ENODATA`).
    private static func value(of name: [UInt8], at target: Target, visible: Pathname) throws(FileError) -> [UInt8]? {
        let cName = name.map { CChar(bitPattern: $0) } + [0]
        while true {
            let size = target.get(cName, nil, 0)
            if size < 0 {
                if ErrorNumber.current == ErrorNumber(rawValue: ENODATA) { return nil }
                throw FileError(.getxattr, path: visible, errno: .current)
            }
            var value = [UInt8](repeating: 0, count: size)
            let read = value.withUnsafeMutableBytes { target.get(cName, $0.baseAddress, size) }
            if read >= 0 { return Array(value[..<read]) }
            if ErrorNumber.current == ErrorNumber(rawValue: ENODATA) { return nil }
            if ErrorNumber.current != ErrorNumber(rawValue: ERANGE) { throw FileError(.getxattr, path: visible, errno: .current) }
        }
    }

    /// The names of the ACLs (acl(5)): the access ACL of any file, and the default ACL that a
    /// directory gives what is created in it.
    static let aclNames = ["system.posix_acl_access", "system.posix_acl_default"]

    /// These attributes without the ACLs (``aclNames``): what a regular file takes besides the
    /// access ACL, which ``FileSink`` gives it by its own rules.
    var withoutACLs: ExtendedAttributes {
        ExtendedAttributes(attributes.filter { !Self.aclNames.contains(String(decoding: $0.name, as: UTF8.self)) })
    }

    /// Removes from `target` each ACL these attributes do not hold, so that it ends with
    /// exactly the source's ACLs (none where the source had none), whatever the default ACL of
    /// its directory gave it at creation, as `cp -p` and `rsync -A` leave it. "None there" and
    /// "no ACLs on this file system" are not errors.
    ///
    /// - Returns: the ACLs that could not be removed, each with its error (operation `setxattr`
    ///   with `path`).
    func removeACLsNotHeld(from target: Target, path: Pathname, system: SystemCalls) -> [(Attribute, FileError)] {
        let held = Set(attributes.map(\.name))
        var refused: [(Attribute, FileError)] = []
        for aclName in Self.aclNames where !held.contains(Array(aclName.utf8)) {
            guard let error = target.remove(aclName, system: system) else { continue }
            if error == ErrorNumber(rawValue: ENODATA) || error == .notSupported { continue }
            refused.append((Attribute(name: Array(aclName.utf8), value: []), FileError(.setxattr, path: path, errno: error)))
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
    package func write(to name: Pathname, in directory: DirectoryHandle) -> [(Attribute, FileError)] {
        write(to: Target(name, in: directory), path: directory.path.appending(name), system: directory.system)
    }

    /// Gives `target` every attribute, as ``write(to:in:)`` does, through `system`; `path`
    /// names it in errors.
    func write(to target: Target, path: Pathname, system: SystemCalls) -> [(Attribute, FileError)] {
        var refused: [(Attribute, FileError)] = []
        for attribute in attributes {
            let cName = attribute.name.map { CChar(bitPattern: $0) } + [0]
            if let error = attribute.value.withUnsafeBytes({ target.set(cName, $0, system: system) }) {
                refused.append((attribute, FileError(.setxattr, path: path, errno: error)))
            }
        }
        return refused
    }
}
