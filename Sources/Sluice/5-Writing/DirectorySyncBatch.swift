#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The directories that renames of a batch of files went into, each to be `fsync(2)`ed once
/// for all of them: the last step of committing many files
/// (<doc:DurabilityOfManyFiles>).
///
/// A ``FileSink`` made with ``FileSink/Options/synchronizesDirectory`` off syncs its data and
/// renames; the caller then records the destination's directory here and, once the batch is
/// committed, calls ``synchronize()``: one `open(2)` + `fsync(2)` + `close(2)` per directory,
/// whatever the count of files renamed into it. Until then a crash may lose a rename (the
/// destination then holds its old bytes, or is absent, and the temporary file may remain),
/// never leave a renamed-but-empty file: the data was synced before the rename.
///
/// Memory: one path per distinct directory, not per file, and at most ``DescriptorBudget/directoriesToSync`` open directories (64 under the usual limit).
///
/// ## Concurrency contract
/// Every method may be called from any thread. ``synchronize()`` blocks its thread for the
/// `fsync(2)` calls: call it from a ``BlockingIOExecutor``, never from the cooperative pool.
package final class DirectorySyncBatch: Sendable {
    /// Each directory by its path, with its open descriptor when a walk gave one (a directory
    /// deeper than `PATH_MAX` can only be synced through it).
    private let directories = LockedValue<[Pathname: DirectoryHandle?]>([:])
    private let system: SystemCalls
    /// The most open directories held before the batch is synced early (``record(directoryOf:)``),
    /// so that a tree's walk holds a bounded number of descriptors.
    static let maximumOpenDirectories = DescriptorBudget.current.directoriesToSync

    /// Creates an empty batch.
    package convenience init() {
        self.init(system: .live)
    }

    init(system: SystemCalls) {
        self.system = system
    }

    /// Removes the file at `path` (`unlinkat(2)`, through the system-call seam) and records its
    /// directory, so that ``synchronize()`` makes the removal durable: what `--rm` does to a
    /// source once its copy is durable, so that a crash after it cannot bring the source back.
    ///
    /// - Throws: ``FileError`` (operation `unlinkat`) with `path` and the errno; nothing is
    ///   recorded then.
    package func removeFile(at path: Pathname) throws(FileError) {
        if case .failure(let error) = ErrorNumber.retryingInterrupts({ FileLocation(path: path).remove(system: system) }) {
            throw FileError(.unlinkat, path: path, errno: error)
        }
        record(path.directory)
    }

    /// Records that a file was renamed into `directory`.
    package func record(_ directory: Pathname) {
        directories.withLock { if $0[directory] == nil { $0[directory] = .some(nil) } }
    }

    /// Records that a file was renamed to `location`: its directory, kept open when the
    /// location is a name in an open directory. When that makes more than ``DescriptorBudget/directoriesToSync`` open directories,
    /// syncs the batch at once, on the calling thread, so the descriptors held stay bounded;
    /// a directory that then fails to sync is reported by the next ``synchronize()``.
    ///
    /// - Note: may block: call it from a ``BlockingIOExecutor``.
    package func record(directoryOf location: FileLocation) {
        guard let handle = location.directory else {
            record(location.path.directory)
            return
        }
        let isFull = directories.withLock { directories in
            if case .some(.some) = directories[handle.path] {} else { directories[handle.path] = handle }
            return directories.values.count(where: { $0 != nil }) > Self.maximumOpenDirectories
        }
        if isFull { releaseOpenDirectories() }
    }

    /// Failures of the syncs made early by ``record(directoryOf:)``, for the next ``synchronize()``.
    private let earlyFailures = LockedValue<[Pathname: FileError]>([:])

    /// The directories held open now, waiting for their sync.
    var openCount: Int { directories.withLock { $0.values.count(where: { $0 != nil }) } }

    /// Syncs the directories held open now, early (their failures reported by the next
    /// ``synchronize()``), so that their descriptors are closed: what a copy that ran out of
    /// descriptors does before it waits. Blocks on `fsync(2)`: call it from a thread of the
    /// caller's own.
    ///
    /// - Returns: whether any was held.
    @discardableResult
    func releaseOpenDirectories() -> Bool {
        guard openCount > 0 else { return false }
        let failures = synchronize()
        earlyFailures.withLock { $0.merge(failures) { first, _ in first } }
        return true
    }

    /// The count of directories waiting for their `fsync(2)`.
    package var pendingCount: Int { directories.withLock { $0.count } }

    /// Whether ``synchronize()`` has nothing to do: no directory waits, and no early sync failed.
    var isEmpty: Bool { pendingCount == 0 && earlyFailures.withLock { $0.isEmpty } }

    /// `fsync(2)`s every recorded directory once, and forgets them.
    ///
    /// - Returns: the directories that could not be synced, with the error (of `open(2)` or
    ///   `fsync(2)`): the renames into them are in place but not known to be durable.
    package func synchronize() -> [Pathname: FileError] {
        let taken = directories.withLock { directories in
            defer { directories.removeAll() }
            return directories
        }
        var failures = earlyFailures.withLock { failures in
            defer { failures.removeAll() }
            return failures
        }
        for (directory, handle) in taken.sorted(by: { $0.key.bytes.lexicographicallyPrecedes($1.key.bytes) }) {
            do throws(FileError) {
                if let handle {
                    try handle.synchronize()
                    continue
                }
                try Descriptor.synchronizeDirectory(directory, system: system)
            } catch {
                failures[directory] = error
            }
        }
        return failures
    }
}
