import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Creating, reading and removing entries of a directory: `mkdirat(2)`, `symlinkat(2)`,
/// `readlinkat(2)`, `linkat(2)`, `mknodat(2)`, `unlinkat(2)`, `renameat2(2)`.
extension DirectoryHandle {
    /// `mkdirat(2)`: creates the directory `name` with `permissions` (narrowed by the umask or
    /// the default ACL).
    ///
    /// - Throws: ``FileError`` (operation `mkdirat`; `EEXIST` when the name is taken).
    package func makeDirectory(_ name: Pathname, permissions: mode_t) throws(FileError) {
        try call(.mkdirat, name) { system.makeDirectoryAt(descriptor.rawValue, $0, permissions) }
    }

    /// `symlinkat(2)`: creates the symbolic link `name` whose target is `target` (any bytes,
    /// dangling or not).
    ///
    /// - Throws: ``FileError`` (operation `symlinkat`).
    package func makeSymbolicLink(_ name: Pathname, target: Pathname) throws(FileError) {
        try call(.symlinkat, name) { link in target.withCString { system.makeSymbolicLinkAt($0, descriptor.rawValue, link) } }
    }

    /// `readlinkat(2)`: the target of the symbolic link `name`, as bytes.
    ///
    /// - Throws: ``FileError`` (operation `readlinkat`).
    package func linkTarget(of name: Pathname) throws(FileError) -> Pathname {
        var capacity = 256
        while true {
            var buffer = [UInt8](repeating: 0, count: capacity)
            let count = name.withCString { link in
                buffer.withUnsafeMutableBytes { readlinkat(descriptor.rawValue, link, $0.baseAddress!.assumingMemoryBound(to: CChar.self), capacity) }
            }
            if count < 0 { throw FileError(.readlinkat, path: path.appending(name), errno: .current) }
            if count < capacity { return Pathname(bytes: Array(buffer[..<count])) }
            capacity *= 4
        }
    }

    /// `linkat(2)`: makes `name` here another name of the file `existing` in `directory`
    /// (a symbolic link itself, never its target).
    ///
    /// - Throws: ``FileError`` (operation `linkat`) with the new name's path.
    package func makeHardLink(_ name: Pathname, to existing: Pathname, in directory: DirectoryHandle) throws(FileError) {
        try call(.linkat, name) { new in
            existing.withCString { system.linkAt(directory.descriptor.rawValue, $0, descriptor.rawValue, new, 0) }
        }
    }

    /// `mknodat(2)`: creates a FIFO (`S_IFIFO`, as `mkfifoat(3)`), a character or block device
    /// (`S_IFCHR`, `S_IFBLK`: root only) or a socket node named `name`.
    ///
    /// - Parameters:
    ///   - name: the new entry's name (one component).
    ///   - mode: the file type bits and the permission bits.
    ///   - device: the device number (`st_rdev`) for a device.
    /// - Throws: ``FileError`` (operation `mknodat`).
    package func makeNode(_ name: Pathname, mode: mode_t, device: UInt64 = 0) throws(FileError) {
        try call(.mknodat, name) { system.makeNodeAt(descriptor.rawValue, $0, mode, dev_t(device)) }
    }

    /// `unlinkat(2)` of `name`; with `isDirectory`, `AT_REMOVEDIR` (an empty directory).
    ///
    /// - Throws: ``FileError`` (operation `unlinkat`).
    package func removeEntry(_ name: Pathname, isDirectory: Bool = false) throws(FileError) {
        let flags = isDirectory ? CSluiceShims_AT_REMOVEDIR : 0
        try call(.unlinkat, name) { system.unlinkAt(descriptor.rawValue, $0, flags) }
    }

    /// `renameat2(2)` of `name` here to `newName` in `directory`; `noReplace` refuses an
    /// existing `newName` (`RENAME_NOREPLACE`, `EEXIST`).
    ///
    /// - Throws: ``FileError`` (operation `rename`) with the new name's path.
    package func rename(
        _ name: Pathname, to newName: Pathname, in directory: DirectoryHandle, noReplace: Bool = false
    ) throws(FileError) {
        let flags = noReplace ? CSluiceShims_RENAME_NOREPLACE : 0
        let result = name.withCString { from in
            newName.withCString { to in system.renameAt(descriptor.rawValue, from, directory.descriptor.rawValue, to, flags) }
        }
        if case .failure(let error) = result { throw FileError.rename(path: directory.path.appending(newName), errno: error) }
    }

    /// Runs one `*at` call on `name`, retried on `EINTR`, and reports its failure with the
    /// entry's path.
    func call(_ operation: FileError.Operation, _ name: Pathname, _ body: (UnsafePointer<CChar>) -> CInt) throws(FileError) {
        try call(operation, name) { body($0) < 0 ? .failure(.current) : .success(()) }
    }

    /// ``call(_:_:_:)`` for a call of the seam (``SystemCalls``), which gives its errno.
    func call(
        _ operation: FileError.Operation, _ name: Pathname, _ body: (UnsafePointer<CChar>) -> Result<Void, ErrorNumber>
    ) throws(FileError) {
        if case .failure(let error) = ErrorNumber.retryingInterrupts({ name.withCString(body) }) {
            throw FileError(operation, path: path.appending(name), errno: error)
        }
    }
}
