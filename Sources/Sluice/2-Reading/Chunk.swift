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
/// for every chunk (<doc:Architecture>, "Stages and their threads").
///
/// Smaller chunks keep their bytes in the same allocation as their bookkeeping: one `malloc`
/// per chunk, where a copy in 4 KiB chunks makes 65,536 of them per 256 MiB.
///
/// A chunk may be a *hole* (``hole(count:)``, ``isHole``): a run of zeros that a sparse source
/// has no blocks for (`SEEK_HOLE`). It holds no memory: its bytes are a read-only mapping of
/// the kernel's zero page, so a stage that reads it (a pipe's writer, a compression, a
/// CRC-32) reads zeros, while a sink that can skip a range (``FileSink``, with `lseek(2)`)
/// makes a hole of it. A hole counts its length in ``count``, in progress and in the CRC-32;
/// it weighs nothing in a channel's byte budget. It equals a data chunk of as many zeros.
///
/// - Note: `Chunk` is `Sendable` and may cross any concurrency domain. (`@unchecked` because
///   its storage is a `ManagedBuffer`, which is not `Sendable`; the bytes are written only
///   inside `init`, before any other thread can see the chunk, and only read afterwards.)
public struct Chunk: @unchecked Sendable, Hashable {
    @usableFromInline
    let storage: ChunkStorage

    /// Copies `bytes` into a new chunk.
    ///
    /// - Parameter bytes: the chunk's contents; may be empty.
    ///
    /// Bytes in contiguous memory (an array, a slice of one, `Data`) are copied with one
    /// `memcpy`; any other collection byte by byte.
    public init(_ bytes: some Collection<UInt8>) {
        let count = bytes.count
        guard let storage = ChunkStorage.make(capacity: count) else { preconditionFailure("out of memory for a chunk of \(count) bytes") }
        let buffer = UnsafeMutableRawBufferPointer(start: storage.base, count: count)
        let copied: Void? = bytes.withContiguousStorageIfAvailable { source in
            if count > 0 { buffer.copyMemory(from: UnsafeRawBufferPointer(source)) }
        }
        if copied == nil { _ = buffer.initializeMemory(as: UInt8.self, from: bytes) }
        storage.count = count
        self.storage = storage
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
    /// - Precondition: memory for `capacity` bytes can be had (as for an `Array`'s storage).
    @inlinable
    public init<E: Error>(
        capacity: Int,
        initializingWith initializer: (UnsafeMutableRawBufferPointer) throws(E) -> Int
    ) throws(E) {
        guard let storage = ChunkStorage.make(capacity: capacity) else {
            preconditionFailure("out of memory for a chunk of \(capacity) bytes")
        }
        try self.init(storage: storage, capacity: capacity, initializingWith: initializer)
    }

    /// As ``init(capacity:initializingWith:)``, for the buffers Sluice sizes itself (a chunk
    /// size, an output chunk, a block): throws a ``FileError`` of code
    /// ``FileError/Code/outOfMemory`` when memory (or address space, under `ulimit -v`) for
    /// `capacity` bytes cannot be had, instead of stopping the process.
    ///
    /// - Throws: ``FileError`` (`malloc`, `ENOMEM`); whatever `initializer` throws.
    package init(
        allocating capacity: Int,
        initializingWith initializer: (UnsafeMutableRawBufferPointer) throws(FileError) -> Int
    ) throws(FileError) {
        guard let storage = ChunkStorage.make(capacity: capacity) else { throw FileError.outOfMemory(bytes: capacity) }
        try self.init(storage: storage, capacity: capacity, initializingWith: initializer)
    }

    /// As the initializer above, for an initializer that throws other errors.
    ///
    /// - Throws: ``FileError`` (`malloc`, `ENOMEM`); whatever `initializer` throws.
    package init<E: Error>(
        allocating capacity: Int,
        initializingWith initializer: (UnsafeMutableRawBufferPointer) throws(E) -> Int
    ) throws {
        guard let storage = ChunkStorage.make(capacity: capacity) else { throw FileError.outOfMemory(bytes: capacity) }
        try self.init(storage: storage, capacity: capacity, initializingWith: initializer)
    }

    @inlinable
    init<E: Error>(
        storage: ChunkStorage, capacity: Int, initializingWith initializer: (UnsafeMutableRawBufferPointer) throws(E) -> Int
    ) throws(E) {
        let count = try initializer(UnsafeMutableRawBufferPointer(start: storage.base, count: capacity))
        precondition(count >= 0 && count <= capacity, "initializer returned a count out of 0...capacity")
        storage.count = count
        self.storage = storage
    }

    /// A hole of `count` bytes: zeros that take no memory (see ``Chunk``).
    ///
    /// - Parameter count: its length in bytes; >= 0.
    /// - Precondition: address space for `count` bytes of zeros can be mapped (a read-only
    ///   mapping that takes no memory).
    public static func hole(count: Int) -> Chunk {
        do {
            return try makeHole(count: count)
        } catch {
            preconditionFailure("\(error)")
        }
    }

    /// As ``hole(count:)``, for the holes Sluice finds: throws when the address space for its
    /// zeros cannot be mapped.
    ///
    /// - Throws: ``FileError`` (`mmap`, `ENOMEM`).
    package static func makeHole(count: Int) throws(FileError) -> Chunk {
        precondition(count >= 0, "count must not be negative")
        return Chunk(storage: ChunkStorage.makeHole(count: count, zeros: try ZeroRegion.zeros(count: count)))
    }

    init(storage: ChunkStorage) {
        self.storage = storage
    }

    /// Whether the chunk is a hole (``hole(count:)``): zeros with no blocks behind them.
    @inlinable
    public var isHole: Bool { storage.header.isHole }

    /// The bytes the chunk holds in memory: ``count``, or 0 for a hole and for a range of a
    /// source (``sourceRange``). What a channel's byte budget weighs.
    @inlinable
    package var residentCount: Int { storage.header.holdsBytes ? count : 0 }

    /// The number of bytes in the chunk.
    @inlinable
    public var count: Int { storage.count }

    /// Whether the chunk holds no bytes.
    @inlinable
    package var isEmpty: Bool { storage.count == 0 }

    /// A copy of the chunk's bytes as an array (for tests and small data; the data path uses
    /// ``withUnsafeBytes(_:)``).
    public var bytes: [UInt8] {
        withUnsafeBytes { Array($0) }
    }

    /// Calls `body` with a read-only view of the chunk's bytes, valid only during the call.
    @inlinable
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        // A range of a source has no bytes here: only a sink that copies it may see it.
        precondition(storage.header.holdsBytes || storage.header.isHole, "the bytes of a range of a source were read")
        return try body(UnsafeRawBufferPointer(start: storage.base, count: storage.count))
    }

    /// Whether two chunks hold the same bytes (not whether they share storage).
    public static func == (lhs: Chunk, rhs: Chunk) -> Bool {
        lhs.count == rhs.count
            && (lhs.storage === rhs.storage
                || lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { memcmp(left.baseAddress!, $0.baseAddress!, lhs.count) == 0 } })
    }

    /// Hashes the chunk's bytes.
    public func hash(into hasher: inout Hasher) {
        withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

/// The buffer behind a ``Chunk``: written once by the code that makes the chunk, then only read.
///
/// A chunk smaller than the pool's smallest buffer keeps its bytes in the same allocation as
/// this object: one `malloc` per chunk, not two (a copy allocates on its reading thread and frees
/// on its writing one, and each of those is a turn of `malloc`'s lock between them). A larger
/// one takes its buffer from ``ChunkPool`` and gives it back when the last chunk that shares it
/// is gone.
///
/// Not `Sendable` itself (`ManagedBuffer` is not); ``Chunk`` is, because the memory is written
/// only before the chunk is published (inside `Chunk.init`) and read-only afterwards.
@usableFromInline
final class ChunkStorage: ManagedBuffer<ChunkStorage.Header, UInt8> {
    @usableFromInline
    struct Header {
        @usableFromInline var count: Int
        @usableFromInline let capacity: Int
        @usableFromInline let base: UnsafeMutableRawPointer
        /// Whether `base` came from ``ChunkPool`` (else it is this object's own tail, or zeros).
        @usableFromInline let isPooled: Bool
        /// Whether `base` is ``ZeroRegion``'s: a hole.
        @usableFromInline let isHole: Bool
        /// Whether the chunk holds its bytes in memory: not a hole, not a range of a source.
        @usableFromInline let holdsBytes: Bool
        /// The range of a source the chunk stands for (``Chunk/sourceRange``), or `nil`.
        let range: Chunk.SourceRange?
    }

    /// Storage for up to `capacity` bytes, uninitialised; `nil` when a buffer of 64 KiB or
    /// more cannot be had (a smaller one is part of the object, as an array's).
    @usableFromInline
    static func make(capacity: Int) -> ChunkStorage? {
        precondition(capacity >= 0, "capacity must not be negative")
        let isPooled = capacity >= ChunkPool.minimumPooledCapacity
        let pooled = isPooled ? ChunkPool.shared.take(capacity: capacity) : nil
        if isPooled && pooled == nil { return nil }
        let buffer = create(minimumCapacity: isPooled ? 0 : capacity) { buffer in
            let base = pooled ?? UnsafeMutableRawPointer(buffer.withUnsafeMutablePointerToElements { $0 })
            return Header(
                count: 0, capacity: capacity, base: base, isPooled: isPooled, isHole: false, holdsBytes: true, range: nil)
        }
        return unsafeDowncast(buffer, to: ChunkStorage.self)
    }

    /// Storage for a hole of `count` bytes: its bytes are ``ZeroRegion``'s, never written. Or
    /// for a range of a source of `count` bytes, which has no bytes at all (reading them traps):
    /// a clone of a 200 TiB file maps nothing. `zeros` is where a hole's bytes are
    /// (``ZeroRegion/zeros(count:)`` of `count`).
    static func makeHole(count: Int, zeros: UnsafeRawPointer, range: Chunk.SourceRange? = nil) -> ChunkStorage {
        let buffer = create(minimumCapacity: 0) { _ in
            Header(
                count: count, capacity: count,
                base: UnsafeMutableRawPointer(mutating: zeros),
                isPooled: false, isHole: range == nil, holdsBytes: false, range: range)
        }
        return unsafeDowncast(buffer, to: ChunkStorage.self)
    }

    @inlinable var base: UnsafeMutableRawPointer { header.base }
    @inlinable var count: Int {
        get { header.count }
        set { header.count = newValue }
    }

    deinit {
        if header.isPooled { ChunkPool.shared.recycle(header.base, capacity: header.capacity) }
    }
}
