#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The state of one `TreeCopy.run(onFailure:)`: the walk of the source, the chain of
/// destination directories beside it, and the records the final pass needs.
///
/// Used by one task, on the copy's executor. What the runner's completions touch (counts) is
/// in ``tally``, under a lock.
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

    /// A name to make a hard link to the first copy of its inode, after every job completed.
    struct PendingLink {
        var identity: FileIdentity
        var first: (directory: Int, name: Pathname)
        var directory: Int
        var name: Pathname
        var path: Pathname
    }

    let copy: TreeCopy
    /// What copies the regular files, made for this run.
    let runner: any FileJobRunner
    let options: TreeCopy.Options
    let onFailure: @Sendable (any Error) -> Void
    let warnings = PreservationWarnings()
    let tally = LockedValue(Copier.TreeReport())
    let umask: UInt32
    let targetParent: DirectoryHandle
    let targetName: Pathname
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
    var pendingLinks: [PendingLink] = []
    /// The inodes whose first name was copied (a regular file committed, a link or node made):
    /// only those get hard links in the final pass.
    let copiedIdentities = LockedValue<Set<FileIdentity>>([])
    /// The directories (records; `nil` for the target's parent) where a symbolic link, FIFO,
    /// device or socket was made: synced in the final pass, as no file's rename covers them.
    var directoriesWithNodes: Set<Int?> = []
    /// Temporary files of Sluice's found in the source (``Descriptor/isTemporaryName(_:)``),
    /// passed over: the first, and how many.
    var leftovers: (first: Pathname?, count: Int) = (nil, 0)

    init(copy: TreeCopy, runner: any FileJobRunner, onFailure: @escaping @Sendable (any Error) -> Void) throws {
        self.copy = copy
        self.runner = runner
        self.options = copy.options
        self.onFailure = onFailure
        self.umask = Self.currentUmask()
        self.walker = TreeWalker(
            root: copy.source, followsLinks: options.tree.links == .all, followsRootLink: options.tree.links == .root,
            maximumOpenDirectories: options.tree.maximumOpenDirectories)
        // Out of descriptors, the walk waits while the runner releases some of its own.
        walker.releasesDescriptors = { runner.waitForReleasedDescriptors() }
        walker.system = copy.system
        if DescriptorBudget.current.copiesOneFileAtATime {
            // Too few descriptors for a file beside the walk unless its directories are the
            // walk's own: the walk opens a directory only once no file holds descriptors.
            walker.beforeOpeningDirectory = { runner.waitUntilNoFileHoldsDescriptors() }
        }
        let rootStatus = try FileStatus.of(copy.source, followsLinks: options.tree.links != .never)
        targetParent = try DirectoryHandle.open(copy.target.directory, system: copy.system)
        targetName = copy.target.lastComponent
        if rootStatus.kind == .directory { try refuseCopyIntoItself(rootStatus) }
    }

    /// Refuses a target whose directory is the source or inside it: each directory from the
    /// target's up to `/` (through `..`, one descriptor at a time) is compared with the source,
    /// and the walk is told to refuse each of them (a bind mount or a followed link inside the
    /// source could lead to one).
    private func refuseCopyIntoItself(_ source: FileStatus) throws {
        var handle = targetParent
        while true {
            let status = try handle.status()
            if status.isSameFile(as: source) { throw FileError.copyIntoItself(source: copy.source, destination: copy.target) }
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
        tally.withLock { $0.failures += 1 }
        onFailure(error)
    }

    /// Walks the source, creating directories, links and special files, and handing regular
    /// files to the runner.
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

    /// The destination directory and name for `entry`, and its directory's record; `nil` when
    /// the directory that holds it could not be copied (already reported).
    func place(of entry: TreeWalker.Entry) -> (directory: DirectoryHandle, name: Pathname, record: Int?)? {
        if entry.depth == 0 { return (targetParent, targetName, nil) }
        guard let record = frames.last ?? nil, let destination else { return nil }
        return (destination.top, entry.name, record)
    }

    /// The path of `entry`'s copy, for messages: the target joined with its path below the root.
    func destinationPath(of entry: TreeWalker.Entry) -> Pathname {
        entry.depth == 0 ? copy.target : copy.target.appending(entry.relativePath)
    }

    /// Makes `entry`'s copy and enters it. `walked`: whether the walk entered the source
    /// directory too (its entries follow), else its entries could not be read.
    private func enterDirectory(_ entry: TreeWalker.Entry, walked: Bool = true) {
        guard let (directory, name, parentRecord) = place(of: entry) else {
            if walked { walker.skipCurrentDirectory() }
            frames.append(nil)
            return
        }
        let path = destinationPath(of: entry)
        do {
            let existed = try Self.makeDirectory(name, in: directory, permissions: entry.status.permissions, path: path, source: entry.path)
            let handle = try DescriptorBudget.retrying(whileReleasing: runner.waitForReleasedDescriptors) {
                try directory.openDirectory(name, path: path)
            }
            // The copy's own directory: never walked as a part of the source.
            let made = try handle.status()
            walker.refuseToEnter(device: made.device, inode: made.inode, as: path)
            if entry.depth == 0 {
                destination = try DirectoryStack(root: handle, maximumOpen: options.tree.maximumOpenDirectories)
            } else {
                try destination!.push(handle, name: name)
            }
            var attributes: ExtendedAttributes?
            if options.sink.preservesAttributes {
                do { attributes = try ExtendedAttributes.read(of: entry.name, in: entry.parent) } catch {
                    warnings.record("extended attributes", error)
                }
            }
            records.append(DirectoryRecord(
                parent: parentRecord, name: name, path: path, status: entry.status, attributes: attributes, existed: existed,
                identity: made.identity))
            frames.append(records.count - 1)
            tally.withLock { $0.directories += 1 }
        } catch {
            fail(error)
            if walked { walker.skipCurrentDirectory() }
            frames.append(nil)
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
        do { try destination!.pop(releasingDescriptors: runner.waitForReleasedDescriptors) } catch {
            // The stack is one level up all the same (that level closed): the parent's own
            // leave still pops it. Its remaining entries cannot be placed: skipped.
            fail(error)
            if walked { walker.skipCurrentDirectory() }
        }
    }
}
