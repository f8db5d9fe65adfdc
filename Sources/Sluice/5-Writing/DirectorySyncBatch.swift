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
/// Memory: one path per distinct directory, not per file.
///
/// ## Concurrency contract
/// Every method may be called from any thread. ``synchronize()`` blocks its thread for the
/// `fsync(2)` calls: call it from a ``BlockingIOExecutor``, never from the cooperative pool.
public final class DirectorySyncBatch: Sendable {
    private let directories = LockedValue<Set<FilePath>>([])
    private let system: SystemCalls

    /// Creates an empty batch.
    public convenience init() {
        self.init(system: .live)
    }

    init(system: SystemCalls) {
        self.system = system
    }

    /// Records that a file was renamed into `directory`.
    public func record(_ directory: FilePath) {
        _ = directories.withLock { $0.insert(directory) }
    }

    /// The count of directories waiting for their `fsync(2)`.
    public var pendingCount: Int { directories.withLock { $0.count } }

    /// `fsync(2)`s every recorded directory once, and forgets them.
    ///
    /// - Returns: the directories that could not be synced, with the error (of `open(2)` or
    ///   `fsync(2)`): the renames into them are in place but not known to be durable.
    public func synchronize() -> [FilePath: FileError] {
        let taken = directories.withLock { directories in
            defer { directories.removeAll() }
            return directories
        }
        var failures: [FilePath: FileError] = [:]
        for directory in taken.sorted(by: { $0.bytes.lexicographicallyPrecedes($1.bytes) }) {
            do throws(FileError) {
                let descriptor = try FileDescriptor.open(directory, O_RDONLY | O_DIRECTORY, system: system)
                try descriptor.closeAfter(system: system) { () throws(FileError) in
                    do throws(Errno) { try descriptor.synchronize(system: system) } catch {
                        throw FileError.fsync(path: directory, errno: error)
                    }
                }
            } catch {
                failures[directory] = error
            }
        }
        return failures
    }
}
