#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// The temporary files that live ``FileSink``s have created and not yet renamed or removed.
///
/// A program that must exit at once (a second SIGINT, a watchdog after a signal) calls
/// ``removeAll()`` so that no `.sluice-*.tmp` is left behind. Thread-safe.
public final class TemporaryFiles: Sendable {
    /// The process-wide registry.
    public static let shared = TemporaryFiles()

    private let paths = LockedValue<Set<FilePath>>([])

    /// The process's file mode creation mask (`umask(2)`), read once.
    static let processUmask: UInt32 = {
        let mask = umask(0o022)
        umask(mask)
        return UInt32(mask)
    }()

    func register(_ path: FilePath) {
        _ = paths.withLock { $0.insert(path) }
    }

    func unregister(_ path: FilePath) {
        _ = paths.withLock { $0.remove(path) }
    }

    /// The paths registered now.
    public var current: Set<FilePath> { paths.withLock { $0 } }

    /// Unlinks every registered temporary file (`unlink(2)`, errors ignored) and forgets them.
    ///
    /// Safe from any thread, also while sinks are writing (their later writes go to an
    /// unlinked file and their commit fails).
    public func removeAll() {
        let all = paths.withLock { paths in
            defer { paths.removeAll() }
            return paths
        }
        for path in all { _ = path.withCString { unlink($0) } }
    }
}
