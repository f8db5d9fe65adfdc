import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Sluice

/// Records, in order, every call of the system-call seam (``SystemCalls``) that changes what is
/// on disk under a scenario's root directory, resolved to the model's nodes
/// (``CrashOperation``): the trace the crash-state explorer replays.
///
/// Each mutating call runs with the recorder's lock held, so the trace's order is the order the
/// kernel saw (calls of several threads at once are put in some order, as the kernel does).
/// What a call's arguments name is resolved with direct calls that never go through the seam
/// (`fstat`, `fstatat`, `lseek(SEEK_CUR)`, `pread`): the bytes a write, a `copy_file_range` or a
/// clone gave the file are read back for the trace. Calls on what lies outside the root are
/// named in ``calls`` and left out of the trace.
final class CrashRecorder: @unchecked Sendable {
    // @unchecked: every stored property is read and written with `lock` held.
    private struct Key: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    // Not `()`: ThreadSanitizer takes the inout access of a zero-size value for one of the
    // mutex pointer beside it, and reports every lock as a race.
    private let lock = LockedValue(0)
    private var nodes: [Key: Int] = [:]
    private var nextNode = 1
    /// The model with every operation kept: what the recorder resolves names and sizes against.
    private var live = CrashModel()
    private(set) var operations: [CrashOperation] = []
    /// Every mutating call seen, under the root or not, by the name strace gives it.
    private(set) var calls: [String] = []
    /// The state before the scenario ran.
    let initial: CrashModel
    let root: Pathname
    /// What a planted change of the trace or a scenario's check needs: the node of each path
    /// of the initial state.
    private(set) var initialNodes: [[UInt8]: Int] = [:]

    /// Takes the state of `root` (read directly, as it is on disk now: taken as durable).
    init(root: Pathname) {
        self.root = root
        var model = CrashModel()
        var nodes: [Key: Int] = [:]
        var next = 1
        var paths: [[UInt8]: Int] = [:]
        func node(for raw: stat) -> Int {
            let key = Key(device: UInt64(raw.st_dev), inode: UInt64(raw.st_ino))
            if let known = nodes[key] { return known }
            defer { next += 1 }
            nodes[key] = next
            return next
        }
        var rootStatus = stat()
        _ = root.withCString { lstat($0, &rootStatus) }
        nodes[Key(device: UInt64(rootStatus.st_dev), inode: UInt64(rootStatus.st_ino))] = CrashModel.root
        var pending: [(Pathname, [UInt8], Int)] = [(root, [], CrashModel.root)]
        while let (directory, relative, directoryNode) = pending.popLast() {
            var entries: [[UInt8]: Int] = [:]
            for name in Self.names(in: directory) {
                let path = directory.appending(Pathname(bytes: name))
                let childRelative = relative.isEmpty ? name : relative + [UInt8(ascii: "/")] + name
                var raw = stat()
                guard path.withCString({ lstat($0, &raw) }) == 0 else { continue }
                let child = node(for: raw)
                entries[name] = child
                paths[childRelative] = child
                if model.nodes[child] == nil { model.nodes[child] = Self.snapshot(path, raw) }
                if raw.st_mode & S_IFMT == S_IFDIR { pending.append((path, childRelative, child)) }
            }
            model.nodes[directoryNode] = .directory(entries: entries, mode: UInt32(rootStatus.st_mode) & 0o7777)
        }
        // Each directory's own mode (the loop above gave each the root's).
        for (relative, child) in paths {
            guard case .directory(let entries, _)? = model.nodes[child] else { continue }
            var raw = stat()
            _ = root.appending(Pathname(bytes: relative)).withCString { lstat($0, &raw) }
            model.nodes[child] = .directory(entries: entries, mode: UInt32(raw.st_mode) & 0o7777)
        }
        initial = model
        live = model
        self.nodes = nodes
        nextNode = next
        initialNodes = paths
    }

    /// The state of `root` now, read from disk, as the model shows it: the final state a
    /// scenario's trace must reach.
    func finalState() -> CrashModel {
        CrashRecorder(root: root).initial
    }

    /// The node of the file of `identity` (its device and inode), if the recorder saw it.
    func node(of identity: FileIdentity) -> Int? {
        lock.withLock { _ in nodes[Key(device: identity.device, inode: identity.inode)] }
    }

    /// The model with every recorded operation kept.
    var replayed: CrashModel {
        lock.withLock { _ in live }
    }

    /// The system calls of `base` (the real ones by default), each mutating one recorded.
    func systemCalls(over base: SystemCalls = .live) -> SystemCalls {
        var system = base
        system.open = { path, flags, mode in
            self.opening(directory: CSluiceShims_AT_FDCWD, path: path, flags: flags, mode: mode) {
                base.open(path, flags, mode)
            }
        }
        system.openAt = { directory, path, flags, mode in
            self.opening(directory: directory, path: path, flags: flags, mode: mode) {
                base.openAt(directory, path, flags, mode)
            }
        }
        system.close = { descriptor in
            self.recording("close") { base.close(descriptor) } record: { _ in [] }
        }
        system.write = { descriptor, buffer, count in
            self.writing(descriptor) { base.write(descriptor, buffer, count) } bytes: { written in
                Array(UnsafeRawBufferPointer(start: buffer, count: written))
            }
        }
        system.writev = { descriptor, vectors, count in
            self.writing(descriptor, call: "writev") { base.writev(descriptor, vectors, count) } bytes: { written in
                var bytes: [UInt8] = []
                for vector in UnsafeBufferPointer(start: vectors, count: Int(count)) where bytes.count < written {
                    let taken = min(vector.iov_len, written - bytes.count)
                    bytes += UnsafeRawBufferPointer(start: vector.iov_base, count: taken)
                }
                return bytes
            }
        }
        system.fsync = { descriptor in
            self.recording("fsync") { base.fsync(descriptor) } record: { _ in
                self.node(of: descriptor).map { [CrashOperation(call: "fsync", effect: .none, sync: .node($0), domain: nil)] } ?? []
            }
        }
        system.synchronizeFileSystem = { descriptor in
            self.recording("syncfs") { base.synchronizeFileSystem(descriptor) } record: { _ in
                [CrashOperation(call: "syncfs", effect: .none, sync: .fileSystem, domain: nil)]
            }
        }
        system.synchronizeFileRange = { descriptor, flags in
            self.recording("sync_file_range") { base.synchronizeFileRange(descriptor, flags) } record: { _ in
                [CrashOperation(call: "sync_file_range", effect: .none, sync: nil, domain: nil)]
            }
        }
        system.truncate = { descriptor, size in
            self.recording("ftruncate") { base.truncate(descriptor, size) } record: { _ in
                self.node(of: descriptor).map { [CrashOperation(call: "ftruncate", effect: .size(node: $0, size: Int(size)), domain: $0)] } ?? []
            }
        }
        system.copyFileRange = { source, sourceOffset, destination, destinationOffset, count in
            self.recording("copy_file_range") { base.copyFileRange(source, sourceOffset, destination, destinationOffset, count) } record: { copied in
                guard let node = self.node(of: destination) else { return [] }
                return self.dataOperations("copy_file_range", node: node, offset: Int(destinationOffset), bytes: Self.read(source, at: sourceOffset, count: copied))
            }
        }
        system.clone = { destination, source in
            self.recording("ioctl") { base.clone(destination, source) } record: { _ in
                // The destination is now the whole source (its descriptor may be write-only).
                guard let node = self.node(of: destination) else { return [] }
                var raw = stat()
                fstat(source, &raw)
                let bytes = Self.read(source, at: 0, count: Int(raw.st_size))
                return self.dataOperations("ioctl", node: node, offset: 0, bytes: bytes, size: bytes.count)
            }
        }
        system.rename = { from, to, flags in
            self.renaming(CSluiceShims_AT_FDCWD, from, CSluiceShims_AT_FDCWD, to, call: flags == 0 ? "rename" : "renameat2") {
                base.rename(from, to, flags)
            }
        }
        system.renameAt = { fromDirectory, from, toDirectory, to, flags in
            self.renaming(fromDirectory, from, toDirectory, to, call: "renameat2") { base.renameAt(fromDirectory, from, toDirectory, to, flags) }
        }
        system.linkAt = { fromDirectory, from, toDirectory, to, flags in
            // The file linked: an unnamed one by its descriptor, else the entry `from`.
            let source = self.lock.withLock { _ in self.linkedNode(fromDirectory, from, flags) }
            return self.recording("linkat") { base.linkAt(fromDirectory, from, toDirectory, to, flags) } record: { _ in
                guard let node = source, let (directory, name) = self.parent(toDirectory, to) else { return [] }
                return [CrashOperation(call: "linkat", effect: .entry(directory: directory, name: name, node: node), domain: directory)]
            }
        }
        system.unlinkAt = { directory, path, flags in
            let target = self.lock.withLock { _ in self.parent(directory, path) }
            return self.recording("unlinkat") { base.unlinkAt(directory, path, flags) } record: { _ in
                guard let (parent, name) = target else { return [] }
                return [CrashOperation(call: "unlinkat", effect: .entry(directory: parent, name: name, node: nil), domain: parent)]
            }
        }
        system.makeDirectoryAt = { directory, path, mode in
            self.making("mkdirat", directory, path) { base.makeDirectoryAt(directory, path, mode) } node: { raw in
                .directory(entries: [:], mode: UInt32(raw.st_mode) & 0o7777)
            }
        }
        system.makeSymbolicLinkAt = { target, directory, path in
            self.making("symlinkat", directory, path) { base.makeSymbolicLinkAt(target, directory, path) } node: { _ in
                .symbolicLink(target: Array(String(cString: target).utf8))
            }
        }
        system.makeNodeAt = { directory, path, mode, device in
            self.making("mknodat", directory, path) { base.makeNodeAt(directory, path, mode, device) } node: { raw in
                .special(mode: UInt32(raw.st_mode))
            }
        }
        system.setPermissions = { descriptor, mode in
            self.recording("fchmod") { base.setPermissions(descriptor, mode) } record: { _ in
                self.node(of: descriptor).map { [CrashOperation(call: "fchmod", effect: .mode(node: $0, mode: UInt32(mode) & 0o7777), domain: $0)] } ?? []
            }
        }
        system.setPermissionsAt = { directory, path, mode in
            let node = self.lock.withLock { _ in self.entryNode(directory, path) }
            return self.recording("fchmodat") { base.setPermissionsAt(directory, path, mode) } record: { _ in
                node.map { [CrashOperation(call: "fchmodat", effect: .mode(node: $0, mode: UInt32(mode) & 0o7777), domain: $0)] } ?? []
            }
        }
        system.setOwner = { descriptor, user, group in
            self.recording("fchownat") { base.setOwner(descriptor, user, group) } record: { _ in self.metadata("fchownat", self.node(of: descriptor)) }
        }
        system.setTimes = { descriptor, times in
            self.recording("utimensat") { base.setTimes(descriptor, times) } record: { _ in self.metadata("utimensat", self.node(of: descriptor)) }
        }
        system.setTimesAt = { directory, path, times in
            let node = self.lock.withLock { _ in self.entryNode(directory, path) }
            return self.recording("utimensat") { base.setTimesAt(directory, path, times) } record: { _ in self.metadata("utimensat", node) }
        }
        system.setOwnerAt = { directory, path, user, group in
            let node = self.lock.withLock { _ in self.entryNode(directory, path) }
            return self.recording("fchownat") { base.setOwnerAt(directory, path, user, group) } record: { _ in self.metadata("fchownat", node) }
        }
        system.setExtendedAttribute = { descriptor, name, value in
            self.recording("fsetxattr") { base.setExtendedAttribute(descriptor, name, value) } record: { _ in
                self.metadata("fsetxattr", self.node(of: descriptor))
            }
        }
        system.removeExtendedAttribute = { descriptor, name in
            self.recording("fremovexattr") { base.removeExtendedAttribute(descriptor, name) } record: { _ in
                self.metadata("fremovexattr", self.node(of: descriptor))
            }
        }
        system.setEntryExtendedAttribute = { path, name, value in
            self.recording("lsetxattr") { base.setEntryExtendedAttribute(path, name, value) } record: { _ in [] }
        }
        system.removeEntryExtendedAttribute = { path, name in
            self.recording("lremovexattr") { base.removeEntryExtendedAttribute(path, name) } record: { _ in [] }
        }
        return system
    }

    // MARK: Recording

    /// Runs `call` with the lock held; when it succeeds, names it in ``calls`` and appends
    /// what `record` makes of its result to the trace (and to the live model).
    private func recording<Value>(
        _ name: String, _ call: () -> Result<Value, ErrorNumber>, record: (Value) -> [CrashOperation]
    ) -> Result<Value, ErrorNumber> {
        lock.withLock { _ in
            let result = call()
            if case .success(let value) = result {
                let made = record(value)
                // Named only when it acts on the scenario's files (what strace is compared on).
                if !made.isEmpty { calls.append(name) }
                for operation in made {
                    operations.append(operation)
                    live.apply(operation)
                }
            }
            return result
        }
    }

    private func writing(
        _ descriptor: CInt, call name: String = "write", _ call: () -> Result<Int, ErrorNumber>, bytes: (Int) -> [UInt8]
    ) -> Result<Int, ErrorNumber> {
        // The offset before the write: where its bytes go (a seek past the end made a hole).
        let offset = lseek(descriptor, 0, SEEK_CUR)
        return recording(name, call) { written in
            guard let node = node(of: descriptor), offset >= 0 else { return [] }
            return dataOperations(name, node: node, offset: Int(offset), bytes: bytes(written))
        }
    }

    /// A write of `bytes` at `offset`, one operation per block it touches (4 KiB), then the
    /// size it gives the file (if it grew, or `size` if given).
    private func dataOperations(_ call: String, node: Int, offset: Int, bytes: [UInt8], size: Int? = nil) -> [CrashOperation] {
        var operations: [CrashOperation] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, ((offset + start) / Self.block + 1) * Self.block - offset)
            operations.append(CrashOperation(
                call: call, effect: .data(node: node, offset: offset + start, bytes: Array(bytes[start..<end])), domain: node))
            start = end
        }
        let current: Int = if case .file(_, let size, _)? = live.nodes[node] { size } else { 0 }
        let newSize = size ?? max(current, offset + bytes.count)
        if newSize != current {
            operations.append(CrashOperation(call: call, effect: .size(node: node, size: newSize), domain: node))
        }
        return operations
    }

    static let block = 4096

    private func opening(
        directory: CInt, path: UnsafePointer<CChar>, flags: CInt, mode: mode_t, _ call: () -> Result<CInt, ErrorNumber>
    ) -> Result<CInt, ErrorNumber> {
        let unnamed = flags & CSluiceShims_O_TMPFILE == CSluiceShims_O_TMPFILE
        let creates = flags & O_CREAT != 0 || unnamed
        return lock.withLock { _ in
            var before = stat()
            let existed = fstatat(directory, path, &before, CSluiceShims_AT_SYMLINK_NOFOLLOW) == 0
            let target = parent(directory, path)
            let result = call()
            guard case .success(let descriptor) = result else { return result }
            var raw = stat()
            fstat(descriptor, &raw)
            let key = Key(device: UInt64(raw.st_dev), inode: UInt64(raw.st_ino))
            var made: [CrashOperation] = []
            if creates && (unnamed || !existed) {
                // A new inode: a new node, whatever number the kernel reused.
                let node = nextNode
                nextNode += 1
                nodes[key] = node
                made.append(CrashOperation(
                    call: "openat", effect: .makeNode(node, .file(data: [], size: 0, mode: UInt32(raw.st_mode) & 0o7777)), domain: nil))
                if !unnamed, let (parent, name) = target {
                    made.append(CrashOperation(call: "openat", effect: .entry(directory: parent, name: name, node: node), domain: parent))
                }
            } else if flags & O_TRUNC != 0, let node = nodes[key] {
                made.append(CrashOperation(call: "openat", effect: .size(node: node, size: 0), domain: node))
            }
            if !made.isEmpty {
                calls.append("openat")
                for operation in made {
                    operations.append(operation)
                    live.apply(operation)
                }
            }
            return result
        }
    }

    private func renaming(
        _ fromDirectory: CInt, _ from: UnsafePointer<CChar>, _ toDirectory: CInt, _ to: UnsafePointer<CChar>, call name: String,
        _ call: () -> Result<Void, ErrorNumber>
    ) -> Result<Void, ErrorNumber> {
        let (source, target) = lock.withLock { _ in (parent(fromDirectory, from), parent(toDirectory, to)) }
        return recording(name, call) { _ in
            guard let (fromParent, fromName) = source, let (toParent, toName) = target else { return [] }
            var operation = CrashOperation(
                call: name, effect: .rename(fromDirectory: fromParent, fromName: fromName, toDirectory: toParent, toName: toName),
                domain: toParent)
            if fromParent != toParent { operation.otherDomain = fromParent }
            return [operation]
        }
    }

    private func making(
        _ name: String, _ directory: CInt, _ path: UnsafePointer<CChar>, _ call: () -> Result<Void, ErrorNumber>,
        node kind: (stat) -> CrashModel.Node
    ) -> Result<Void, ErrorNumber> {
        let target = lock.withLock { _ in parent(directory, path) }
        return recording(name, call) { _ in
            var raw = stat()
            guard fstatat(directory, path, &raw, CSluiceShims_AT_SYMLINK_NOFOLLOW) == 0, let (parent, entry) = target else { return [] }
            let node = nextNode
            nextNode += 1
            nodes[Key(device: UInt64(raw.st_dev), inode: UInt64(raw.st_ino))] = node
            return [
                CrashOperation(call: name, effect: .makeNode(node, kind(raw)), domain: nil),
                CrashOperation(call: name, effect: .entry(directory: parent, name: entry, node: node), domain: parent),
            ]
        }
    }

    /// A call on `node` that changes nothing the model keeps (owner, times, extended
    /// attributes): in the trace, never a pending operation of a crash point.
    private func metadata(_ name: String, _ node: Int?) -> [CrashOperation] {
        node.map { _ in [CrashOperation(call: name, effect: .none, domain: nil)] } ?? []
    }

    // MARK: Resolving (with the lock held)

    /// The node the open descriptor is, by its device and inode now (never a table of
    /// descriptors, which a close outside the seam would leave stale).
    private func node(of descriptor: CInt) -> Int? {
        var raw = stat()
        guard fstat(descriptor, &raw) == 0 else { return nil }
        return nodes[Key(device: UInt64(raw.st_dev), inode: UInt64(raw.st_ino))]
    }

    /// The node of the directory that holds `path` (relative to `directory`) and its last
    /// component; `nil` outside the model.
    private func parent(_ directory: CInt, _ path: UnsafePointer<CChar>) -> (Int, [UInt8])? {
        let bytes = Array(String(cString: path).utf8)
        let slash = bytes.lastIndex(of: UInt8(ascii: "/"))
        let name = slash.map { Array(bytes[($0 + 1)...]) } ?? bytes
        let directoryPath = slash.map { $0 == 0 ? "/" : String(decoding: bytes[..<$0], as: UTF8.self) } ?? "."
        var raw = stat()
        guard fstatat(directory, directoryPath, &raw, 0) == 0,
            let node = nodes[Key(device: UInt64(raw.st_dev), inode: UInt64(raw.st_ino))]
        else { return nil }
        return (node, name)
    }

    /// The node the entry `path` names now (a link itself, not followed).
    private func entryNode(_ directory: CInt, _ path: UnsafePointer<CChar>) -> Int? {
        var raw = stat()
        guard fstatat(directory, path, &raw, CSluiceShims_AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return nodes[Key(device: UInt64(raw.st_dev), inode: UInt64(raw.st_ino))]
    }

    /// The node `linkat(2)` gives a name: with `AT_SYMLINK_FOLLOW` and `/proc/self/fd/N`, the
    /// open file `N`; else the entry `from`.
    private func linkedNode(_ directory: CInt, _ from: UnsafePointer<CChar>, _ flags: CInt) -> Int? {
        let path = String(cString: from)
        if flags & CSluiceShims_AT_EMPTY_PATH != 0, path.isEmpty { return node(of: directory) }
        if flags & CSluiceShims_AT_SYMLINK_FOLLOW != 0, path.hasPrefix("/proc/self/fd/"), let number = CInt(path.dropFirst(14)) {
            return node(of: number)
        }
        return entryNode(directory, from)
    }

    private static func read(_ descriptor: CInt, at offset: Int64, count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
            if got <= 0 { break }
            done += got
        }
        return Array(bytes[..<done])
    }

    // MARK: The initial state

    private static func names(in directory: Pathname) -> [[UInt8]] {
        guard let stream = directory.withCString({ opendir($0) }) else { return [] }
        defer { closedir(stream) }
        var names: [[UInt8]] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if name != [UInt8(ascii: ".")] && name != [UInt8(ascii: "."), UInt8(ascii: ".")] { names.append(name) }
        }
        return names
    }

    private static func snapshot(_ path: Pathname, _ raw: stat) -> CrashModel.Node {
        switch raw.st_mode & S_IFMT {
        case S_IFREG:
            let descriptor = path.withCString { Glibc.open($0, O_RDONLY | O_CLOEXEC) }
            defer { if descriptor >= 0 { Glibc.close(descriptor) } }
            let bytes = descriptor >= 0 ? read(descriptor, at: 0, count: Int(raw.st_size)) : []
            return .file(data: bytes, size: bytes.count, mode: UInt32(raw.st_mode) & 0o7777)
        case S_IFDIR: return .directory(entries: [:], mode: UInt32(raw.st_mode) & 0o7777)
        case S_IFLNK:
            var buffer = [CChar](repeating: 0, count: 4096)
            let count = path.withCString { readlink($0, &buffer, buffer.count) }
            return .symbolicLink(target: buffer[..<max(0, count)].map { UInt8(bitPattern: $0) })
        default: return .special(mode: UInt32(raw.st_mode))
        }
    }
}
