#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Sluice

/// ``SystemCalls`` over the real ones whose kernel-copy calls a test scripts: the file-system
/// type every descriptor reports (so that the path table picks a clone or a kernel copy on
/// this machine's file system), what `FICLONE` answers, and what the n-th `copy_file_range`
/// answers; counts the calls.
final class KernelCalls: Sendable {
    /// What one `copy_file_range` does.
    enum Answer: Sendable {
        /// The real call.
        case real
        /// Fails with this errno, copying nothing.
        case failure(ErrorNumber)
        /// Returns 0, copying nothing: a /proc or /sys file on a kernel before 5.3.
        case nothing
        /// The real call, then the byte at this offset of the destination inverted if the call
        /// wrote it: a device that stores a byte wrongly and reports success.
        case corrupting(at: Int64)
    }

    private struct State {
        var clones = 0
        var copies = 0
        var truncates = 0
        var writeBacks = 0
    }

    let fileSystem: FileSystemType?
    let clone: ErrorNumber?
    /// Whether `FICLONE` succeeds by copying the whole source (`clone` must be `nil`): the clone
    /// path on a file system that cannot clone.
    let emulatesClone: Bool
    let copy: @Sendable (_ call: Int) -> Answer
    /// Runs after each real `copy_file_range`, with its number (from 1).
    let afterCopy: @Sendable (_ call: Int) -> Void
    private let state = LockedValue(State())

    /// - Parameters:
    ///   - fileSystem: the type `fstatfs` reports for every descriptor; `nil`: the real one.
    ///   - clone: the errno `FICLONE` fails with; `nil`: the real call.
    ///   - emulatesClone: `FICLONE` succeeds, by a copy of the whole source.
    ///   - copy: the answer of the n-th `copy_file_range` (from 1).
    ///   - afterCopy: called after each real `copy_file_range`.
    init(
        fileSystem: FileSystemType? = nil, clone: ErrorNumber? = nil, emulatesClone: Bool = false,
        copy: @escaping @Sendable (Int) -> Answer = { _ in .real },
        afterCopy: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.fileSystem = fileSystem
        self.clone = clone
        self.emulatesClone = emulatesClone
        self.copy = copy
        self.afterCopy = afterCopy
    }

    /// How many `FICLONE` and `copy_file_range` calls were made.
    var counts: (clones: Int, copies: Int) { state.withLock { ($0.clones, $0.copies) } }

    /// How many `ftruncate` calls were made.
    var truncates: Int { state.withLock { $0.truncates } }

    /// How many `sync_file_range` calls were made.
    var writeBacks: Int { state.withLock { $0.writeBacks } }

    var system: SystemCalls {
        let live = SystemCalls.live
        var calls = SystemCalls(
            read: live.read, write: live.write, fsync: live.fsync, writev: live.writev,
            clone: { destination, source in
                self.state.withLock { $0.clones += 1 }
                if let errno = self.clone { return .failure(errno) }
                if self.emulatesClone {
                    var offset: Int64 = 0
                    while true {
                        switch live.copyFileRange(source, offset, destination, offset, 1 << 30) {
                        case .success(0): return .success(())
                        case .success(let copied): offset += Int64(copied)
                        case .failure(let errno): return .failure(errno)
                        }
                    }
                }
                return live.clone(destination, source)
            },
            copyFileRange: { source, sourceOffset, destination, destinationOffset, count in
                let call = self.state.withLock { state -> Int in
                    state.copies += 1
                    return state.copies
                }
                switch self.copy(call) {
                case .failure(let errno): return .failure(errno)
                case .nothing: return .success(0)
                case .real:
                    let result = live.copyFileRange(source, sourceOffset, destination, destinationOffset, count)
                    self.afterCopy(call)
                    return result
                case .corrupting(let offset):
                    let result = live.copyFileRange(source, sourceOffset, destination, destinationOffset, count)
                    if case .success(let copied) = result, offset >= destinationOffset,
                        offset < destinationOffset + Int64(copied) {
                        var byte: UInt8 = 0
                        _ = pread(destination, &byte, 1, off_t(offset))
                        byte ^= 0xFF
                        _ = pwrite(destination, &byte, 1, off_t(offset))
                    }
                    return result
                }
            },
            fileSystemType: { descriptor in
                if let type = self.fileSystem { return .success(type.rawValue) }
                return live.fileSystemType(descriptor)
            })
        calls.truncate = { descriptor, size in
            self.state.withLock { $0.truncates += 1 }
            return live.truncate(descriptor, size)
        }
        calls.synchronizeFileRange = { descriptor, flags in
            self.state.withLock { $0.writeBacks += 1 }
            return live.synchronizeFileRange(descriptor, flags)
        }
        return calls
    }
}
