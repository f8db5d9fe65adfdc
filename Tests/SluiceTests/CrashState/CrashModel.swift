/// The crash-state model of a file system (<doc:CommitPoint>, "What a crash may keep"): the
/// operations a recorded trace applied, and what a crash may keep of each.
///
/// Nodes are numbered by the recorder (a number per inode it saw made or found, so a reused
/// inode number is a new node). A file is its bytes, its size and its mode, each block of its
/// bytes and its size persisting on their own; a directory is its entries.
struct CrashModel: Hashable {
    enum Node: Hashable {
        case file(data: [UInt8], size: Int, mode: UInt32)
        case directory(entries: [[UInt8]: Int], mode: UInt32)
        case symbolicLink(target: [UInt8])
        /// A FIFO, a device or a socket: its mode (type and bits).
        case special(mode: UInt32)
    }

    /// The node of the root directory of the scenario.
    static let root = 0

    var nodes: [Int: Node] = [:]

    /// The bytes a reader of file `node` sees: its data up to its size, zeros past the data.
    func content(of node: Int) -> [UInt8]? {
        guard case .file(let data, let size, _)? = nodes[node] else { return nil }
        if data.count >= size { return Array(data[..<size]) }
        return data + [UInt8](repeating: 0, count: size - data.count)
    }

    /// The node a path (relative to the root, components joined by `/`) names in this state.
    func node(at path: [UInt8]) -> Int? {
        var node = Self.root
        for component in path.split(separator: UInt8(ascii: "/")) {
            guard case .directory(let entries, _)? = nodes[node], let child = entries[Array(component)] else { return nil }
            node = child
        }
        return node
    }

    /// What a path shows in this state: the kind and content a check compares.
    enum Entry: Hashable {
        case file(content: [UInt8], mode: UInt32)
        case directory(mode: UInt32)
        case symbolicLink(target: [UInt8])
        case special(mode: UInt32)
    }

    /// Every entry reachable from the root, by path (components joined by `/`), the root left out.
    func entries() -> [[UInt8]: Entry] {
        var found: [[UInt8]: Entry] = [:]
        var pending: [([UInt8], Int)] = [([], Self.root)]
        while let (path, node) = pending.popLast() {
            guard case .directory(let children, _)? = nodes[node] else { continue }
            for (name, child) in children {
                let childPath = path.isEmpty ? name : path + [UInt8(ascii: "/")] + name
                switch nodes[child] {
                case .file(_, _, let mode)?: found[childPath] = .file(content: content(of: child) ?? [], mode: mode)
                case .directory(_, let mode)?:
                    found[childPath] = .directory(mode: mode)
                    pending.append((childPath, child))
                case .symbolicLink(let target)?: found[childPath] = .symbolicLink(target: target)
                case .special(let mode)?: found[childPath] = .special(mode: mode)
                case nil: break
                }
            }
        }
        return found
    }

    /// Applies one operation (a kept one: the explorer leaves out those a crash lost).
    mutating func apply(_ operation: CrashOperation) {
        switch operation.effect {
        case .makeNode(let node, let kind):
            nodes[node] = kind
        case .data(let node, let offset, let bytes):
            guard case .file(var data, let size, let mode)? = nodes[node] else { return }
            nodes[node] = nil  // keeps `data` unique while it changes
            let end = offset + bytes.count
            if data.count < end { data += [UInt8](repeating: 0, count: end - data.count) }
            data.replaceSubrange(offset..<end, with: bytes)
            nodes[node] = .file(data: data, size: size, mode: mode)
        case .size(let node, let newSize):
            guard case .file(var data, _, let mode)? = nodes[node] else { return }
            nodes[node] = nil
            // What lies past a smaller size is gone: it reads as zeros if the file grows again.
            if data.count > newSize { data.removeSubrange(newSize...) }
            nodes[node] = .file(data: data, size: newSize, mode: mode)
        case .mode(let node, let mode):
            switch nodes[node] {
            case .file(let data, let size, _)?: nodes[node] = .file(data: data, size: size, mode: mode)
            case .directory(let entries, _)?: nodes[node] = .directory(entries: entries, mode: mode)
            default: break
            }
        case .entry(let directory, let name, let node):
            setEntry(name, in: directory, to: node)
        case .rename(let fromDirectory, let fromName, let toDirectory, let toName):
            guard case .directory(let entries, _)? = nodes[fromDirectory], let node = entries[fromName] else { return }
            setEntry(fromName, in: fromDirectory, to: nil)
            setEntry(toName, in: toDirectory, to: node)
        case .none:
            break
        }
    }

    private mutating func setEntry(_ name: [UInt8], in directory: Int, to node: Int?) {
        guard case .directory(var entries, let mode)? = nodes[directory] else { return }
        nodes[directory] = nil
        entries[name] = node
        nodes[directory] = .directory(entries: entries, mode: mode)
    }
}

/// One recorded call, as the model sees it: what it changes (``Effect``), and which sync makes
/// that durable (``Domain``).
struct CrashOperation: Hashable, Sendable, CustomStringConvertible {
    enum Effect: Hashable, Sendable {
        /// A node made (an inode created: named or `O_TMPFILE`, a directory, a link, a node):
        /// never lost by itself; what names it is an ``entry(directory:name:node:)``.
        case makeNode(Int, CrashModel.Node)
        /// Bytes of a file at an offset: at most one block (a write is split at block boundaries).
        case data(node: Int, offset: Int, bytes: [UInt8])
        /// The file's size (a write that extends it, `ftruncate`).
        case size(node: Int, size: Int)
        /// Permission bits (`fchmod`, `fchmodat`).
        case mode(node: Int, mode: UInt32)
        /// A directory entry made (`node`) or removed (`nil`): create, `linkat`, `unlinkat`.
        case entry(directory: Int, name: [UInt8], node: Int?)
        /// `rename`/`renameat2`: atomic, the old entry or the new one.
        case rename(fromDirectory: Int, fromName: [UInt8], toDirectory: Int, toName: [UInt8])
        /// Nothing the model keeps (owner, times, extended attributes, `close`, syncs).
        case none
    }

    /// What makes an operation durable.
    enum Sync: Hashable, Sendable {
        /// `fsync(2)` of the node (a file: its data, size and metadata; a directory: its entries).
        case node(Int)
        /// `syncfs(2)`: everything on the file system.
        case fileSystem
    }

    /// The system call, as strace names it.
    var call: String
    var effect: Effect
    /// Set for `fsync` and `syncfs`.
    var sync: Sync?
    /// The node whose sync makes this operation durable (a file for its data, size and mode, a
    /// directory for its entries and mode); `nil` for what a crash cannot lose: a
    /// ``Effect/makeNode(_:_:)`` and what the model does not keep (``Effect/none``).
    var domain: Int?
    /// A rename's other directory, when it has one: both must be synced (or the file system).
    var otherDomain: Int?

    var description: String {
        switch effect {
        case .makeNode(let node, _): "\(call) makes node \(node)"
        case .data(let node, let offset, let bytes): "\(call) node \(node) bytes \(offset)..<\(offset + bytes.count)"
        case .size(let node, let size): "\(call) node \(node) size \(size)"
        case .mode(let node, let mode): "\(call) node \(node) mode \(String(mode, radix: 8))"
        case .entry(let directory, let name, let node):
            "\(call) node \(directory) entry '\(String(decoding: name, as: UTF8.self))' -> \(node.map(String.init) ?? "removed")"
        case .rename(let fromDirectory, let fromName, let toDirectory, let toName):
            "\(call) \(fromDirectory)/'\(String(decoding: fromName, as: UTF8.self))' -> \(toDirectory)/'\(String(decoding: toName, as: UTF8.self))'"
        case .none: sync.map { sync in
            switch sync {
            case .node(let node): "\(call) node \(node)"
            case .fileSystem: call
            }
        } ?? call
        }
    }

    /// Whether the syncs in `later` (the calls after this one, before the crash) make this
    /// operation durable: a `syncfs`, or an `fsync` of its node (of both directories of a rename
    /// between two).
    func isMadeDurable<Later: Sequence<CrashOperation>>(by later: Later) -> Bool {
        guard let domain else { return false }
        var synced: Set<Int> = []
        for sync in later.lazy.compactMap(\.sync) {
            switch sync {
            case .fileSystem: return true
            case .node(let node): synced.insert(node)
            }
            if synced.contains(domain) && otherDomain.map(synced.contains) ?? true { return true }
        }
        return false
    }
}
