/// Where an encoder gathers its output into chunks of one size.
///
/// The encoder writes into ``freeSpace`` (zlib's `next_out`) and ``commit(_:)``s the bytes it
/// wrote, or ``append(_:)``s bytes it already holds; whenever the buffer ``isFull``, and once at
/// the end, it emits ``take()``. So every output chunk but the last has exactly ``capacity``
/// bytes, however the compressed bytes arrived.
///
/// Memory: one buffer of ``capacity`` bytes, allocated once. Each chunk taken is a copy of
/// exactly its bytes: the buffer outlives the suspensions of `emit`, which a chunk's own
/// initialiser cannot span.
///
/// Concurrency: not `Sendable`; confined to its encoder.
final class OutputChunkBuffer {
    /// The size of a full chunk, in bytes (> 0).
    let capacity: Int
    /// The bytes gathered, in 0...capacity.
    private(set) var count = 0
    private let storage: UnsafeMutableRawBufferPointer

    /// Creates an empty buffer for chunks of `capacity` bytes.
    ///
    /// - Parameter capacity: bytes per full chunk; must be > 0.
    init(capacity: Int) {
        precondition(capacity > 0, "an output chunk must have room for a byte")
        self.capacity = capacity
        storage = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit {
        storage.deallocate()
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
    func take() -> Chunk {
        let count = self.count
        self.count = 0
        return Chunk(capacity: count) { chunk in
            chunk.copyMemory(from: UnsafeRawBufferPointer(rebasing: storage[..<count]))
            return count
        }
    }
}
