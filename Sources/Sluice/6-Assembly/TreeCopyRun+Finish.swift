/// The final pass, once every file job has completed: hard links, then directory attributes,
/// deepest first.
///
/// Why a final pass and not a count of pending children per directory: the copier may complete
/// jobs in any order on any thread, and a directory's time must be set after the last name
/// made in it (a file's rename, a hard link); after ``TreeCopyRun/waitForJobs()`` nothing is
/// made any more, so the order is simply the reverse of the walk's (every directory after all
/// of its descendants), and no directory descriptor has to stay open for a job still running.
/// The cost is a second descent to each directory, by name from the target (descriptors
/// bounded as in the walk).
extension TreeCopyRun {
    func finish() {
        // Every directory this pass changes is made durable at its end, at once.
        var toSync = DirectoriesToSync()
        defer {
            toSync.synchronize(reopening: { [self] in try navigate(to: $0) }, failing: fail)
        }
        // A link or node given as the operand itself, made in the target's parent.
        if sink.synchronizes, directoriesWithNodes.contains(nil) {
            do { try toSync.add(targetParent, record: nil) } catch { fail(error) }
        }
        guard !records.isEmpty else { return }
        chain = [0]
        makePendingLinks(syncing: &toSync)
        var lastSynchronized: Int?? = .none
        // A directory replaced since the walk is reported once, not again for each below it.
        var reported: Set<String> = []
        for index in records.indices.reversed() {
            let record = records[index]
            do {
                // Its attributes through its own descriptor (no link planted in its place is
                // followed, no directory renamed there is changed).
                let directory = try navigate(to: index)
                let setsAttributes = sink.preservesAttributes || !record.existed
                if sink.preservesAttributes {
                    try apply(record.status, attributes: record.attributes, to: .directory(directory))
                } else if !record.existed {
                    try directory.setPermissions(to: record.status.permissions & 0o7777 & ~umask)
                }
                // Its attributes just set, and the links and nodes made in it (no file's rename
                // made them durable): one fsync(2) of the directory after both. (Found by the
                // crash-state explorer: a read-only directory could come back writable.)
                if sink.synchronizes, setsAttributes || directoriesWithNodes.contains(index) {
                    try toSync.add(directory, record: index)
                }
                let parent = try navigate(to: record.parent)
                // The new directory's name reaches the device with its parent.
                if sink.synchronizes, !record.existed, lastSynchronized != .some(record.parent) {
                    try toSync.add(parent, record: record.parent)
                    lastSynchronized = .some(record.parent)
                }
            } catch {
                if reported.insert("\(error)").inserted { fail(error) }
            }
        }
    }

    /// Makes the hard links to first copies that were committed, each directory recorded in
    /// `toSync` (the new name is durable once its directory is synced).
    private func makePendingLinks(syncing toSync: inout DirectoriesToSync) {
        let copied = shared.withLock { $0.copiedIdentities }
        for link in pendingLinks {
            let first = firstNames[link.identity]!
            guard copied.contains(link.identity) else {
                // Its first name was not copied: a link would reach whatever is at that name.
                fail(FileError(
                    code: .io, operation: .linkat, path: records[link.directory].path.appending(link.name),
                    reason: "its first name '\(records[first.directory].path.appending(first.name))' was not copied"))
                continue
            }
            do {
                let firstDirectory = try navigate(to: first.directory)
                let directory = try navigate(to: link.directory)
                try replacingExisting(link.name, in: directory) { try directory.makeHardLink(link.name, to: first.name, in: firstDirectory) }
                shared.withLock { $0.tally.hardLinks += 1 }
                if sink.synchronizes { try toSync.add(directory, record: link.directory) }
            } catch {
                fail(error)
            }
        }
    }

    /// Moves ``destination`` to the directory of record `index` and returns it: up to the
    /// common ancestor, then down by name (`O_NOFOLLOW`), each directory checked by device and
    /// inode to be the one the walk made or merged into. For `nil`, the target's parent.
    ///
    /// - Throws: ``FileError``: `directoryChanged` for a directory replaced since the walk.
    private func navigate(to index: Int?) throws -> DirectoryHandle {
        guard let index else { return targetParent }
        let wanted = Array(sequence(first: index) { self.records[$0].parent }.reversed())
        var common = 0
        while common < min(chain.count, wanted.count) && chain[common] == wanted[common] { common += 1 }
        while chain.count > common {
            chain.removeLast()
            try destination!.pop(releasingDescriptors: releaseDescriptors)
        }
        for record in wanted[common...] {
            let (top, name, path) = (destination!.top, records[record].name, records[record].path)
            let handle: DirectoryHandle
            do {
                handle = try DescriptorBudget.retrying(whileReleasing: releaseDescriptors) { () throws(FileError) in
                    try top.openDirectory(name, path: path)
                }
            } catch {
                // Not a directory any more (a link, a file) or gone: replaced since the walk.
                let replaced: Set<ErrorNumber> = [.notDirectory, .tooManySymbolicLinkLevels, .noSuchFileOrDirectory]
                if let errno = error.errno, replaced.contains(errno) { throw FileError.directoryChanged(path) }
                throw error
            }
            // The directory the walk made or merged into, and no other.
            guard try handle.status().identity == records[record].identity else { throw FileError.directoryChanged(path) }
            try destination!.push(handle, name: name)
            chain.append(record)
        }
        return destination!.top
    }

    func report() -> Copier.TreeReport {
        var report = shared.withLock { $0.tally }
        report.warnings += warnings.messages
        if let first = leftovers.first {
            let count = leftovers.count
            report.warnings.append(
                "passed over \(count == 1 ? "'\(first)'" : "\(count) files such as '\(first)'"): "
                    + "temporary file\(count == 1 ? "" : "s") an interrupted sluice left (.sluice-*.tmp), never copied")
        }
        return report
    }
}

/// The directories the final pass changed (hard links made in them, attributes set, a new
/// directory's name in its parent), made durable once the pass is done: one `fsync(2)` for a
/// file system where it changed one directory, else one `syncfs(2)` of that file system, one
/// journal commit for all of them where each `fsync(2)` would wait for one (the measurement is
/// in <doc:Trees>, "What is durable when the command returns"). Nothing in the pass depends on
/// an earlier step being durable, so syncing at its end changes no order that a crash could show.
///
/// Only on the local file systems whose `syncfs(2)` the file batches trust as well
/// (`Copier.checksPagesOfItsFiles(_:)`). Elsewhere (FUSE, whose `syncfs(2)` may not reach the
/// daemon; overlayfs; network file systems), and for a directory whose file system cannot be
/// told, each directory is `fsync(2)`ed when it is recorded. Where the `syncfs(2)` fails (it
/// may report another program's write-back error), each directory recorded on that file system
/// is reopened and `fsync(2)`ed, and only those failures are reported.
///
/// Holds one directory open per file system (to sync it through), not one per directory.
struct DirectoriesToSync {
    private struct FileSystem {
        var device: UInt64
        var first: DirectoryHandle
        /// The records of the directories recorded on it (`nil`: the target's parent).
        var records: Set<Int?>
        var count: Int
    }

    private var fileSystems: [FileSystem] = []

    /// Records that `directory` (the directory of `record`, or the target's parent for `nil`)
    /// changed; syncs it at once where its file system's `syncfs(2)` is not trusted.
    ///
    /// - Throws: ``FileError`` of that `fsync(2)`.
    mutating func add(_ directory: DirectoryHandle, record: Int?) throws(FileError) {
        guard let device = try? directory.status().device else { return try directory.synchronize() }
        if let index = fileSystems.firstIndex(where: { $0.device == device }) {
            if fileSystems[index].first !== directory { fileSystems[index].count += 1 }
            fileSystems[index].records.insert(record)
            return
        }
        guard let type = try? directory.descriptor.fileSystemType(), Copier.checksPagesOfItsFiles(type) else {
            return try directory.synchronize()
        }
        fileSystems.append(FileSystem(device: device, first: directory, records: [record], count: 1))
    }

    /// Syncs them; each failure goes to `fail`, and the others are still synced. `reopen`
    /// gives a recorded directory again, for the `fsync(2)` of each after a failed `syncfs(2)`.
    func synchronize(reopening reopen: (Int?) throws -> DirectoryHandle, failing fail: (any Error) -> Void) {
        for fileSystem in fileSystems {
            do {
                if fileSystem.count == 1 { try fileSystem.first.synchronize() } else { try fileSystem.first.synchronizeFileSystem() }
            } catch {
                guard fileSystem.count > 1 else {
                    fail(error)
                    continue
                }
                for record in fileSystem.records.sorted(by: { ($0 ?? -1) < ($1 ?? -1) }) {
                    do { try reopen(record).synchronize() } catch { fail(error) }
                }
            }
        }
    }
}
