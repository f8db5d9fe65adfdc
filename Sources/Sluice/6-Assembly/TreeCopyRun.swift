#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One tree copied by a ``Copier`` (``Copier/copyTree(from:to:options:onOutcome:onFailure:)``):
/// the walk of the source, whose regular files are jobs of that copier, the chain of
/// destination directories beside it, and the records the final pass needs.
///
/// Used by one task, on the tree's executor (a thread of its own, which it blocks). What the
/// jobs' completions touch (counts, the jobs still running) is under a lock.
final class TreeCopyRun {
    /// A directory created (or merged into) in the destination, for the final pass.
    /// About 200 bytes plus its name and path per directory.
    struct DirectoryRecord {
        /// The record of the directory that holds it; `nil` for the target itself.
        var parent: Int?
        var name: Pathname
        var path: Pathname
        var status: FileStatus
        var attributes: ExtendedAttributes?
        /// Whether it was there before (merged into): without `--preserve` its mode is left.
        var existed: Bool
        /// The copy's device and inode, as opened during the walk: the final pass gives its
        /// attributes to that directory only, never to one renamed or linked into its place.
        var identity: FileIdentity
    }

    /// The copier whose jobs the regular files are; its options say how every entry is written.
    let copier: Copier
    /// Where it goes: ``Copier/treeTarget(source:destination:)``.
    let target: Pathname
    /// What is followed, and hard links kept.
    let tree: Copier.TreeOptions
    let onOutcome: @Sendable (Copier.Outcome) -> Void
    let onFailure: @Sendable (any Error) -> Void
    let shared = LockedCondition(Shared())
    let warnings = PreservationWarnings()
    let umask: UInt32
    let targetParent: DirectoryHandle
    var walker: TreeWalker
    /// The destination directories from the target down to the one beside the walk's.
    var destination: DirectoryStack?
    /// For each directory the walk is in, its record; `nil` where its copy could not be made.
    var frames: [Int?] = []
    var records: [DirectoryRecord] = []
    /// The records of the destination directories ``destination`` holds, root first.
    var chain: [Int] = []
    /// The first destination name of each multiply-linked inode (`st_nlink > 1` only): about
    /// 80 bytes plus the name per inode.
    var firstNames: [FileIdentity: (directory: Int, name: Pathname)] = [:]
    /// The other names of those inodes, each a hard link to make to the first copy once every
    /// job completed.
    var pendingLinks: [(identity: FileIdentity, directory: Int, name: Pathname)] = []
    /// The directories (records; `nil` for the target's parent) where a symbolic link, FIFO,
    /// device or socket was made: synced in the final pass, as no file's rename covers them.
    var directoriesWithNodes: Set<Int?> = []
    /// Temporary files of Sluice's found in the source (``Descriptor/isTemporaryName(_:)``),
    /// passed over: the first, and how many.
    var leftovers: (first: Pathname?, count: Int) = (nil, 0)

    /// How every entry is written: the copier's ``Copier/Options/sink``.
    var sink: FileSink.Options { copier.options.sink }

    /// The counts of the tree's entries, the inodes copied and the jobs still running, under
    /// one lock: the jobs' completions update them on any thread.
    struct Shared {
        var tally = Copier.TreeReport()
        /// The inodes whose first name was copied (a regular file committed, a link or node
        /// made): only those get hard links in the final pass.
        var copiedIdentities: Set<FileIdentity> = []
        /// The tree's jobs handed to the copier and not completed yet.
        var pendingJobs = 0
    }

    /// Prepares the copy of `source` to `destination` (``Copier/treeTarget(source:destination:)``)
    /// through `copier`.
    ///
    /// - Throws: ``FileError`` when nothing can be copied: the source cannot be read, the
    ///   target's directory cannot be opened, or the target is inside the source.
    init(
        copier: Copier, source: Pathname, destination: Pathname, tree: Copier.TreeOptions,
        onOutcome: @escaping @Sendable (Copier.Outcome) -> Void, onFailure: @escaping @Sendable (any Error) -> Void
    ) throws {
        self.copier = copier
        self.target = Copier.treeTarget(source: source, destination: destination)
        self.tree = tree
        self.onOutcome = onOutcome
        self.onFailure = onFailure
        self.umask = Self.currentUmask()
        self.walker = TreeWalker(
            root: source, followsLinks: tree.links == .all, followsRootLink: tree.links == .root,
            maximumOpenDirectories: tree.maximumOpenDirectories)
        walker.sharesDescriptors { copier }
        walker.system = copier.system
        let rootStatus = try FileStatus.of(source, followsLinks: tree.links != .never)
        targetParent = try DirectoryHandle.open(target.directory, system: copier.system)
        if rootStatus.kind == .directory { try refuseCopyIntoItself(rootStatus) }
    }

    /// Makes the copier release the descriptors it holds and waits until it has.
    func releaseDescriptors() -> Bool {
        copier.waitForReleasedDescriptors(holding: 0)
    }

    /// Blocks until every job of this tree handed to the copier has completed.
    func waitForJobs() {
        _ = shared.wait { $0.pendingJobs == 0 ? () : nil }
    }

    /// Refuses a target whose directory is the source or inside it: each directory from the
    /// target's up to `/` (through `..`, one descriptor at a time) is compared with the source,
    /// and the walk is told to refuse each of them (a bind mount or a followed link inside the
    /// source could lead to one).
    private func refuseCopyIntoItself(_ source: FileStatus) throws {
        var handle = targetParent
        while true {
            let status = try handle.status()
            if status.isSameFile(as: source) { throw FileError.copyIntoItself(source: walker.root, destination: target) }
            walker.refuseToEnter(device: status.device, inode: status.inode, as: handle.path)
            let up = try handle.openDirectory("..", path: handle.path.appending(".."))
            if try up.status().isSameFile(as: status) { return }
            handle = up
        }
    }

    /// The process's umask, from `/proc/self/status` (reading it with `umask(2)` would change
    /// it for a moment for every thread); `022` where that line is missing.
    static func currentUmask() -> UInt32 {
        guard let file = fopen("/proc/self/status", "r") else { return 0o022 }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, 256, file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.hasPrefix("Umask:") {
                let digits = text.dropFirst(6).filter { $0.isNumber }
                return UInt32(digits, radix: 8) ?? 0o022
            }
        }
        return 0o022
    }

    func fail(_ error: any Error) {
        shared.withLock { $0.tally.failures += 1 }
        onFailure(error)
    }

    /// Walks the source, creating directories, links and special files, and handing regular
    /// files to the copier.
    ///
    /// - Throws: `CancellationError` once the task is cancelled.
    func walk() async throws {
        while let event = walker.next() {
            try Task.checkCancellation()
            switch event {
            case .failure(let error): fail(error)
            case .enterDirectory(let entry, _): enterDirectory(entry)
            case .leaveDirectory(let entry): leaveDirectory(entry)
            case .unreadableDirectory(let entry, let error):
                // Made, empty, with the source's attributes at the end, as `cp -r` does.
                enterDirectory(entry, walked: false)
                leaveDirectory(entry, walked: false)
                fail(error)
            case .file(let entry) where entry.depth > 0 && entry.isSluiceTemporaryFile:
                // Left by an interrupted run (of this tree's own copy, maybe): never copied.
                leftovers = (leftovers.first ?? entry.path, leftovers.count + 1)
            case .file(let entry): try await copyEntry(entry)
            }
        }
    }

    /// The destination directory and name for `entry`, the path of its copy for messages (the
    /// target joined with its path below the root), and its directory's record; `nil` when the
    /// directory that holds it could not be copied (already reported).
    func place(of entry: TreeWalker.Entry) -> (directory: DirectoryHandle, name: Pathname, path: Pathname, record: Int?)? {
        if entry.depth == 0 { return (targetParent, target.lastComponent, target, nil) }
        guard let record = frames.last ?? nil, let destination else { return nil }
        return (destination.top, entry.name, target.appending(entry.relativePath), record)
    }

    /// Makes `entry`'s copy and enters it. `walked`: whether the walk entered the source
    /// directory too (its entries follow), else its entries could not be read.
    private func enterDirectory(_ entry: TreeWalker.Entry, walked: Bool = true) {
        let record = makeCopy(of: entry)
        if record == nil && walked { walker.skipCurrentDirectory() }
        frames.append(record)
    }

    /// Makes (or merges into) the copy of the directory `entry`, opens it on ``destination``
    /// and records it.
    ///
    /// - Returns: its record; `nil` when it could not be made (the failure reported) or its
    ///   parent's copy could not.
    private func makeCopy(of entry: TreeWalker.Entry) -> Int? {
        guard let (directory, name, path, parentRecord) = place(of: entry) else { return nil }
        do {
            let existed = try Self.makeDirectory(name, in: directory, permissions: entry.status.permissions, path: path, source: entry.path)
            let handle = try DescriptorBudget.retrying(whileReleasing: releaseDescriptors) {
                try directory.openDirectory(name, path: path)
            }
            // The copy's own directory: never walked as a part of the source.
            let made = try handle.status()
            walker.refuseToEnter(device: made.device, inode: made.inode, as: path)
            if entry.depth == 0 {
                destination = try DirectoryStack(root: handle, maximumOpen: tree.maximumOpenDirectories)
            } else {
                try destination!.push(handle, name: name)
            }
            records.append(DirectoryRecord(
                parent: parentRecord, name: name, path: path, status: entry.status,
                attributes: sink.preservesAttributes ? attributes(of: entry) : nil, existed: existed, identity: made.identity))
            shared.withLock { $0.tally.directories += 1 }
            return records.count - 1
        } catch {
            fail(error)
            return nil
        }
    }

    /// Creates the directory `name` owner-writable (`0700 | permissions`), or finds one there
    /// to merge into.
    ///
    /// - Returns: whether it existed.
    /// - Throws: ``FileError``: of `mkdirat(2)`, or `alreadyExists` for a name taken by
    ///   something else than a directory.
    private static func makeDirectory(
        _ name: Pathname, in directory: DirectoryHandle, permissions: UInt32, path: Pathname, source: Pathname
    ) throws(FileError) -> Bool {
        do {
            try directory.makeDirectory(name, permissions: mode_t(0o700 | (permissions & 0o7777)))
            return false
        } catch where error.errno == .fileExists {
            guard try directory.status(of: name).kind == .directory else {
                throw FileError(
                    code: .alreadyExists, operation: .mkdirat, path: path,
                    reason: "cannot overwrite non-directory with directory '\(source)'")
            }
            return true
        }
    }

    private func leaveDirectory(_ entry: TreeWalker.Entry, walked: Bool = true) {
        let frame = frames.removeLast()
        guard frame != nil, entry.depth > 0 else { return }
        do { try destination!.pop(releasingDescriptors: releaseDescriptors) } catch {
            // The stack is one level up all the same (that level closed): the parent's own
            // leave still pops it. Its remaining entries cannot be placed: skipped.
            fail(error)
            if walked { walker.skipCurrentDirectory() }
        }
    }
}
