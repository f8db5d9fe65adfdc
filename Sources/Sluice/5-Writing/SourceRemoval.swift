import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The removal of a source whose copy is complete and durable (`--rm`), by the rule of a move
/// that never loses a write: the source is removed only if, at the moment of removal, it is the
/// same file (device and inode) with the same size, modification time and status change time
/// (to the nanosecond) as when it was opened, before its first byte was read, and no other
/// process has it open for writing.
///
/// rsync compares size and modification time with its file list before
/// `--remove-source-files` unlinks; Sluice adds the status change time (which no one can set)
/// and the inode. The writers are refused by a lease (`fcntl(2)` `F_SETLEASE`): a read lease can
/// be had only while no process has the file open for writing, and, once had, a process that
/// opens it for writing waits until it is released, its holder told by a signal (fcntl(2),
/// "Leases"; here `SIGURG`, which is ignored unless handled, rather than `SIGIO`, which would end
/// the process). The lease is taken before the last check and released after the unlink. Before
/// each unlink the name must still name the file checked (an editor's save by rename gives it a
/// new inode), and then the lease must still be whole (`F_GETLEASE`: a writer that began to open
/// the file has begun its break). What is left is the time between that last look at the lease
/// and the unlink, one system call. Where no lease can be had (the file is not the caller's, a
/// file system without leases), the status rule alone decides, and ``Outcome/note`` says so.
///
/// Concurrency: stateless; the calls block (call it from a thread that may).
package enum SourceRemoval {
    /// What became of the source.
    package struct Outcome: Sendable, Equatable {
        /// Why it was kept; `nil` when it was removed.
        package var kept: String?
        /// Why the rule was the status rule alone (no lease could be had), for `-v`.
        package var note: String?
    }

    /// Removes `path`, opened as `opened` says, if the rule allows, recording its directory in
    /// `removals` to be synced.
    ///
    /// - Parameters:
    ///   - path: the source, as the copy opened it (a symbolic link is followed to the file that
    ///     is compared; the name itself is removed).
    ///   - otherNames: more names of the same file to remove with it, under the same lease (the
    ///     hard links of a tree moved whole: removing one changes the others' status change time).
    ///   - opened: the source's status when it was opened, before its first read.
    ///   - removals: where the removal is recorded (its directory is synced later).
    ///   - system: the system calls (`open`, `fstat`).
    package static func remove(
        _ path: Pathname, otherNames: [Pathname] = [], opened: FileStatus, removals: DirectorySyncBatch,
        system: SystemCalls = .live
    ) -> Outcome {
        let descriptor: Descriptor
        do { descriptor = try Descriptor.open(path, O_RDONLY | O_NONBLOCK, system: system) } catch {
            return Outcome(kept: "cannot open it to check it: " + (error.errno?.description ?? "\(error)"))
        }
        defer { try? descriptor.close(system: system) }
        _ = fcntl(descriptor.rawValue, CSluiceShims_F_SETSIG, SIGURG)
        let leased = fcntl(descriptor.rawValue, CSluiceShims_F_SETLEASE, F_RDLCK) == 0
        let error = ErrorNumber.current
        defer { if leased { _ = fcntl(descriptor.rawValue, CSluiceShims_F_SETLEASE, F_UNLCK) } }
        if !leased && (error == .resourceTemporarilyUnavailable || error == ErrorNumber(rawValue: EBUSY)) {
            return Outcome(kept: "another process has it open for writing")
        }
        let note = leased ? nil : "no lease on it (\(error)): removed by the rule of its status alone"
        let checked: FileStatus
        switch check(descriptor, opened: opened, system: system) {
        case .success(let status): checked = status
        case .failure(let kept): return Outcome(kept: kept.reason, note: note)
        }
        for name in [path] + otherNames {
            let now: FileStatus
            do { now = try FileStatus.of(name, followsLinks: name == path) } catch {
                return Outcome(kept: "'\(name)' cannot be checked: " + (error.errno?.description ?? "\(error)"), note: note)
            }
            guard now.isSameFile(as: checked) else { return Outcome(kept: "'\(name)' names another file now", note: note) }
            // Last, right before the unlink: a writer that began to open it has begun the break.
            if leased && fcntl(descriptor.rawValue, CSluiceShims_F_GETLEASE) != F_RDLCK {
                return Outcome(kept: "another process opened it for writing as it was being removed", note: note)
            }
            do { try removals.removeFile(at: name) } catch {
                let subject = otherNames.isEmpty ? "it" : "'\(name)'"
                return Outcome(kept: "cannot remove \(subject): " + (error.errno?.description ?? "\(error)"), note: note)
            }
        }
        return Outcome(kept: nil, note: note)
    }

    /// Moves `source` to `destination` by one `rename(2)` when that is the move a copy followed
    /// by the removal would make (as `mv` renames within one file system), then syncs both
    /// directories, so the move is durable.
    ///
    /// Only a regular file with one link and no set-ID or sticky bit (any with `force`), or a
    /// directory, is renamed, and only to a name that does not exist (`RENAME_NOREPLACE`), or,
    /// with `force`, that names another regular file (replaced atomically). Anything else
    /// (another file system, a destination the copy refuses or writes in place, the same file)
    /// is left to the copy.
    ///
    /// - Returns: whether it was renamed; `false` when the copy must take it.
    /// - Throws: ``FileError`` when the rename failed for another reason than those, or the
    ///   directories could not be synced (then the move is done but not known to be durable).
    package static func rename(
        _ source: Pathname, to destination: Pathname, force: Bool, system: SystemCalls = .live
    ) throws(FileError) -> Bool {
        guard let moved = try? FileStatus.of(source, followsLinks: false) else { return false }
        switch moved.kind {
        case .directory: break
        case .regular where refusal(of: moved, force: force) == nil: break
        default: return false
        }
        var flags = CSluiceShims_RENAME_NOREPLACE
        if let existing = try? FileStatus.of(destination, followsLinks: false) {
            guard force, moved.kind == .regular, existing.kind == .regular, !existing.isSameFile(as: moved) else { return false }
            flags = 0
        }
        switch FileLocation(path: source).rename(to: FileLocation(path: destination), flags: flags, system: system) {
        case .success: break
        case .failure(.improperLink), .failure(.fileExists): return false
        // A file system without RENAME_NOREPLACE: the copy makes the move.
        case .failure(.invalidArgument), .failure(ErrorNumber(rawValue: ENOSYS)): return false
        case .failure(let error): throw FileError(.rename, path: destination, errno: error)
        }
        let directories = DirectorySyncBatch(system: system)
        directories.record(destination.directory)
        directories.record(source.directory)
        if let error = directories.synchronize().values.first { throw error }
        return true
    }

    /// Why a source of `status` is kept unless `force`, as gzip keeps it: removing one name of
    /// several frees nothing, and a set-ID or sticky file is seldom meant to go; `nil` if it is
    /// not.
    package static func refusal(of status: FileStatus, force: Bool) -> String? {
        guard !force else { return nil }
        if status.linkCount > 1 {
            let others = status.linkCount - 1
            return "it has \(others.counted("other hard link")) (use -f to remove it)"
        }
        if status.permissions & 0o7000 != 0 {
            return "it has the set-user-ID, set-group-ID or sticky bit (use -f to remove it)"
        }
        return nil
    }

    /// Why a source is kept.
    private struct Kept: Error {
        var reason: String
    }

    /// The status of the file open at `descriptor` if it is the one `opened` describes,
    /// unchanged; else why it is kept.
    private static func check(_ descriptor: Descriptor, opened: FileStatus, system: SystemCalls) -> Result<FileStatus, Kept> {
        let now: FileStatus
        do { now = try descriptor.status(system: system) } catch { return .failure(Kept(reason: "cannot check it: \(error)")) }
        if let changes = opened.changes(to: now) { return .failure(Kept(reason: "it changed since it was opened to be read (\(changes))")) }
        return .success(now)
    }
}
