#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A bounded pool of chunk buffers, so a copy reuses a few warm buffers instead of asking
/// `malloc` for fresh ones, whose pages the kernel must fault in and zero for every chunk.
///
/// Only buffers of at least ``minimumPooledCapacity`` bytes are pooled, at most
/// ``maximumBuffersPerCapacity`` of one capacity and ``maximumPooledBytes`` in all; anything
/// else is freed at once. The pool's memory is thus bounded, whatever the data's size.
/// Thread-safe.
@usableFromInline
final class ChunkPool: Sendable {
    @usableFromInline
    static let shared = ChunkPool()

    /// Buffers smaller than this (64 KiB) go straight to `malloc`/`free`.
    @usableFromInline static let minimumPooledCapacity = 64 * 1024
    /// At most this many idle buffers of one capacity (8).
    static let maximumBuffersPerCapacity = 8
    /// At most this many idle bytes in all (32 MiB).
    static let maximumPooledBytes = 32 << 20

    /// Idle buffers by capacity, as addresses (raw pointers are not `Sendable`).
    private struct State {
        var idle: [Int: [UInt]] = [:]
        var idleBytes = 0
    }

    private let state = LockedValue(State())

    /// A buffer of `capacity` bytes (at least 1 byte is allocated), uninitialised; `nil` when
    /// `malloc` has no memory (or address space, under `ulimit -v`) for it.
    @usableFromInline
    func take(capacity: Int) -> UnsafeMutableRawPointer? {
        if capacity >= Self.minimumPooledCapacity {
            let pooled = state.withLock { state -> UInt? in
                guard let address = state.idle[capacity]?.popLast() else { return nil }
                state.idleBytes -= capacity
                return address
            }
            if let pooled, let buffer = UnsafeMutableRawPointer(bitPattern: pooled) { return buffer }
        }
        return malloc(max(capacity, 1))
    }

    /// Gives a buffer back: kept for reuse if the pool has room, freed otherwise.
    @usableFromInline
    func recycle(_ buffer: UnsafeMutableRawPointer, capacity: Int) {
        if capacity >= Self.minimumPooledCapacity {
            let kept = state.withLock { state -> Bool in
                guard state.idleBytes + capacity <= Self.maximumPooledBytes,
                    state.idle[capacity, default: []].count < Self.maximumBuffersPerCapacity
                else { return false }
                state.idle[capacity, default: []].append(UInt(bitPattern: buffer))
                state.idleBytes += capacity
                return true
            }
            if kept { return }
        }
        free(buffer)
    }

    /// The count of idle bytes held now (for tests).
    var idleBytes: Int { state.withLock { $0.idleBytes } }
}
