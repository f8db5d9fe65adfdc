#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An owned, immutable run of bytes: the unit that flows through a Sluice pipeline.
///
/// A chunk is a value whose storage is never mutated after it is made, so handing one to the
/// next stage never shares mutable memory. A stage may not keep a chunk after handing it on: the
/// pipeline's memory bound counts each chunk once, in the stage or channel that holds it.
///
/// Chunks of 64 KiB and more come from, and return to, a small bounded pool of buffers
/// (an internal `ChunkPool`): a copy then reuses the same few buffers instead of faulting in fresh pages
/// for every chunk (measured: 1 GiB copied in 1 MiB chunks, 0.54× → ~1× the speed of `cat`).
///
/// - Note: `Chunk` is `Sendable` and may cross any concurrency domain.
public struct Chunk: Sendable, Hashable {
    @usableFromInline
    let storage: ChunkStorage

    /// Copies `bytes` into a new chunk.
    ///
    /// - Parameter bytes: the chunk's contents; may be empty.
    public init(_ bytes: some Collection<UInt8>) {
        let count = bytes.count
        storage = ChunkStorage(capacity: count)
        let buffer = UnsafeMutableRawBufferPointer(start: storage.base, count: count)
        _ = buffer.initializeMemory(as: UInt8.self, from: bytes)
        storage.count = count
    }

    /// Creates a chunk of at most `capacity` bytes, filled by `initializer`.
    ///
    /// The initializer receives an uninitialised buffer of `capacity` bytes and returns how many
    /// bytes, from the start, it initialised (0...capacity). No byte is zero-filled first.
    ///
    /// - Parameters:
    ///   - capacity: the largest count of bytes the chunk may hold; must be >= 0.
    ///   - initializer: writes the bytes and returns their count.
    /// - Throws: whatever `initializer` throws; then no chunk is created (the buffer goes back
    ///   to the pool).
    @inlinable
    public init<E: Error>(
        capacity: Int,
        initializingWith initializer: (UnsafeMutableRawBufferPointer) throws(E) -> Int
    ) throws(E) {
        precondition(capacity >= 0, "capacity must not be negative")
        let storage = ChunkStorage(capacity: capacity)
        let count = try initializer(UnsafeMutableRawBufferPointer(start: storage.base, count: capacity))
        precondition(count >= 0 && count <= capacity, "initializer returned a count out of 0...capacity")
        storage.count = count
        self.storage = storage
    }

    /// The number of bytes in the chunk.
    @inlinable
    public var count: Int { storage.count }

    /// Whether the chunk holds no bytes.
    @inlinable
    public var isEmpty: Bool { storage.count == 0 }

    /// A copy of the chunk's bytes as an array (for tests and small data; the data path uses
    /// ``withUnsafeBytes(_:)``).
    public var bytes: [UInt8] {
        withUnsafeBytes { Array($0) }
    }

    /// Calls `body` with a read-only view of the chunk's bytes, valid only during the call.
    @inlinable
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: storage.base, count: storage.count))
    }

    /// Whether two chunks hold the same bytes (not whether they share storage).
    public static func == (lhs: Chunk, rhs: Chunk) -> Bool {
        lhs.count == rhs.count && (lhs.storage === rhs.storage || memcmp(lhs.storage.base, rhs.storage.base, lhs.count) == 0)
    }

    /// Hashes the chunk's bytes.
    public func hash(into hasher: inout Hasher) {
        withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

/// The buffer behind a ``Chunk``: allocated (or taken from ``ChunkPool``) once, written once by
/// the code that makes the chunk, then only read; returned to the pool when the last chunk that
/// shares it is gone.
///
/// `@unchecked Sendable`: the memory is written only before the chunk is published (inside
/// `Chunk.init`), and read-only afterwards, so sharing it across threads is safe.
@usableFromInline
final class ChunkStorage: @unchecked Sendable {
    @usableFromInline let base: UnsafeMutableRawPointer
    @usableFromInline let capacity: Int
    @usableFromInline var count = 0

    @usableFromInline
    init(capacity: Int) {
        self.capacity = capacity
        self.base = ChunkPool.shared.take(capacity: capacity)
    }

    deinit {
        ChunkPool.shared.recycle(base, capacity: capacity)
    }
}
