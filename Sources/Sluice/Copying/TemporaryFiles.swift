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

    /// The process's file mode creation mask, read once from the `Umask:` line of
    /// `/proc/self/status` (proc(5)): reading it with `umask(2)` would set it for a moment, for
    /// every thread of the process. 022 if it cannot be read.
    static let processUmask: UInt32 = {
        let descriptor = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return 0o022 }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(descriptor, &buffer, buffer.count)
        guard count > 0 else { return 0o022 }
        for line in String(decoding: buffer[..<count], as: UTF8.self).split(separator: "\n")
        where line.hasPrefix("Umask:") {
            return UInt32(String(line.dropFirst("Umask:".count).filter { $0 != " " && $0 != "\t" }), radix: 8) ?? 0o022
        }
        return 0o022
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
