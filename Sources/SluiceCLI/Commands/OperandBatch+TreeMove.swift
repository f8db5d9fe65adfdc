import Sluice
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `copy -r --rm` across file systems: the tree is copied durably, then what was copied of it
/// is removed, as `mv` does: each regular file by the rule of a move (``SourceRemoval``), all
/// its names in the tree under one lease; then each other entry (a symbolic link, a special
/// file) whose copy is there, of its kind; then each directory, deepest first, once empty.
/// Entries are named by paths from the root (a tree deeper than `PATH_MAX` keeps what lies
/// below it, with a warning).
final class TreeMove: Sendable {
    /// The tree's root, as given.
    let source: Pathname
    /// Where the tree's copy is (`Copier.treeTarget(source:destination:)`).
    let target: Pathname
    /// Each regular file copied, by its device and inode, with its status when the copy opened it.
    private let copied = LockedValue<[FileIdentity: FileStatus]>([:])

    init(source: Pathname, target: Pathname) {
        (self.source, self.target) = (source, target)
    }

    /// Records a file of the tree once it is committed.
    func record(_ outcome: Copier.Outcome) {
        guard case .success(let committed) = outcome.result, let opened = committed.report.sourceStatus else { return }
        copied.withLock { $0[opened.identity] = opened }
    }

    /// Removes the tree's entries that were copied, recording their directories in `removals`
    /// to be synced. A file with hard links outside the tree, or a set-ID or sticky bit, is
    /// kept unless `force` (as `compress --rm` keeps it).
    ///
    /// - Returns: why each entry kept is kept, as `'path': reason`; a directory left because an
    ///   entry in it was kept is not named again.
    func removeCopied(force: Bool, removals: DirectorySyncBatch) -> [String] {
        var entries = Entries()
        entries.gather(source)
        let copied = self.copied.withLock { $0 }
        var kept: [String] = []
        for key in entries.fileOrder {
            guard let names = entries.files[key], let first = names.first else { continue }
            guard let opened = copied[key], var status = try? FileStatus.of(first, followsLinks: false) else {
                kept += names.map { "'\($0)': it was not copied" }
                continue
            }
            status.linkCount -= min(status.linkCount, UInt64(names.count - 1))
            if let refusal = SourceRemoval.refusal(of: status, force: force) {
                kept += names.map { "'\($0)': \(refusal)" }
                continue
            }
            if let reason = SourceRemoval.remove(first, otherNames: Array(names.dropFirst()), opened: opened, removals: removals).kept {
                kept.append("'\(first)': \(reason)")
            }
        }
        for (path, kind) in entries.others {
            // Made after the walk that copied the tree, or not copied (a link: not to where its
            // copy leads): not this move's.
            let copy = copy(of: path)
            guard (try? FileStatus.of(copy, followsLinks: false))?.kind == kind, kind != .symbolicLink || Pathname.linkTarget(of: path) == Pathname.linkTarget(of: copy)
            else {
                kept.append("'\(path)': it was not copied")
                continue
            }
            do { try removals.removeFile(at: path) } catch { kept.append("'\(path)': cannot remove it: \(error)") }
        }
        kept += entries.unreadable.map { "'\($0)': cannot read it: what is in it stays" }
        for directory in entries.directories {
            // A directory made after the walk has no copy: kept, even empty.
            guard (try? FileStatus.of(copy(of: directory), followsLinks: false))?.kind == .directory else {
                kept.append("'\(directory)': it was not copied")
                continue
            }
            let error = rmdir(directory.description) == 0 ? 0 : errno
            if error == 0 {
                removals.record(directory.directory)
            } else if error != ENOTEMPTY {
                kept.append("'\(directory)': cannot remove it: \(ErrorNumber(rawValue: error))")
            }
        }
        return kept
    }

    /// Where the copy of `path`, an entry of the tree, is.
    private func copy(of path: Pathname) -> Pathname {
        let relative = path.bytes.dropFirst(source.bytes.count).drop { $0 == UInt8(ascii: "/") }
        return relative.isEmpty ? target : target.appending(Pathname(bytes: Array(relative)))
    }

    /// The entries of a tree, by kind: regular files by identity (every name of each), others,
    /// and directories deepest first.
    private struct Entries {
        var files: [FileIdentity: [Pathname]] = [:]
        var fileOrder: [FileIdentity] = []
        var others: [(path: Pathname, kind: FileStatus.Kind)] = []
        var directories: [Pathname] = []
        var unreadable: [Pathname] = []

        mutating func gather(_ path: Pathname) {
            guard let status = try? FileStatus.of(path, followsLinks: false) else { return }
            switch status.kind {
            case .directory:
                guard let names = Self.names(in: path) else { return unreadable.append(path) }
                for name in names { gather(path.appending(name)) }
                directories.append(path)
            case .regular:
                let key = status.identity
                if files[key] == nil { fileOrder.append(key) }
                files[key, default: []].append(path)
            default:
                others.append((path, status.kind))
            }
        }

        /// The names in directory `path`, but `.` and `..` (``DirectoryHandle/entryNames()``);
        /// `nil` if it cannot be read.
        private static func names(in path: Pathname) -> [Pathname]? {
            try? DirectoryHandle.open(path, followsLinks: false).entryNames()
        }
    }
}
