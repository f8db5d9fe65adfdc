#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where an encoder gathers its output into chunks of one size.
///
/// The encoder writes into ``freeSpace`` (zlib's `next_out`) and ``commit(_:)``s the bytes it
/// wrote, or ``append(_:)``s bytes it already holds; whenever the buffer ``isFull``, and once at
/// the end, it emits ``take()``. So every output chunk but the last has exactly ``capacity``
/// bytes, however the compressed bytes arrived.
///
/// Memory: one buffer of ``capacity`` bytes, allocated once, by ``allocate()`` (the encoder
/// calls it before its first use, where a failure can be thrown). Each chunk taken is a copy of
/// exactly its bytes: the buffer outlives the suspensions of `emit`, which a chunk's own
/// initialiser cannot span.
///
/// Concurrency: not `Sendable`; confined to its encoder.
final class OutputChunkBuffer {
    /// The size of a full chunk, in bytes (> 0).
    let capacity: Int
    /// The bytes gathered, in 0...capacity.
    private(set) var count = 0
    private var buffer: UnsafeMutableRawPointer?

    /// Creates an empty buffer for chunks of `capacity` bytes, not yet allocated.
    ///
    /// - Parameter capacity: bytes per full chunk; must be > 0.
    init(capacity: Int) {
        precondition(capacity > 0, "an output chunk must have room for a byte")
        self.capacity = capacity
    }

    deinit {
        free(buffer)
    }

    /// Allocates the buffer, unless it is already.
    ///
    /// - Throws: ``FileError`` (`malloc`, `ENOMEM`) when memory for it cannot be had.
    func allocate() throws(FileError) {
        guard buffer == nil else { return }
        guard let allocated = malloc(capacity) else { throw FileError.outOfMemory(bytes: capacity) }
        buffer = allocated
    }

    private var storage: UnsafeMutableRawBufferPointer {
        guard let buffer else { preconditionFailure("an OutputChunkBuffer used before allocate()") }
        return UnsafeMutableRawBufferPointer(start: buffer, count: capacity)
    }

    /// Whether a whole chunk is gathered.
    var isFull: Bool { count == capacity }

    /// Whether nothing is gathered.
    var isEmpty: Bool { count == 0 }

    /// The room after the gathered bytes, valid until the next call that changes the buffer.
    var freeSpace: UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(rebasing: storage[count...])
    }

    /// Counts `produced` bytes written at the start of ``freeSpace`` as gathered.
    func commit(_ produced: Int) {
        precondition(produced >= 0 && produced <= capacity - count, "committed more than the free space")
        count += produced
    }

    /// Copies as many of `bytes` as fit and returns how many that was.
    func append(_ bytes: UnsafeRawBufferPointer) -> Int {
        let copied = min(bytes.count, capacity - count)
        freeSpace.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[..<copied]))
        count += copied
        return copied
    }

    /// Returns the gathered bytes as a new chunk and empties the buffer.
    ///
    /// - Throws: ``FileError`` (`malloc`, `ENOMEM`) when memory for the chunk cannot be had.
    func take() throws(FileError) -> Chunk {
        let count = self.count
        self.count = 0
        return try Chunk(allocating: count) { chunk in
            chunk.copyMemory(from: UnsafeRawBufferPointer(rebasing: storage[..<count]))
            return count
        }
    }
}
