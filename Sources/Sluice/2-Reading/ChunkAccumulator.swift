/// Gathers bytes from chunks of any sizes into chunks of one fixed size, copying each byte once.
///
/// A stage that needs its input in blocks of its own size (a parallel compressor cuts its input
/// into fixed blocks, whatever the reader's chunk size) fills the accumulator from each chunk
/// it receives, and takes a block whenever the accumulator is full. Until then the accumulator
/// keeps references to the parts of the chunks it was given, not copies; ``take()`` copies them
/// into one new chunk, or returns the chunk itself when one whole chunk makes the block.
///
/// Memory: the chunks it references, at most `size` bytes of which are its own (the first and
/// the last chunk may be larger than the part taken from them).
///
/// Concurrency: a plain value confined to its stage.
struct ChunkAccumulator {
    /// The size of a full block, in bytes (>= 1).
    let size: Int
    /// The bytes gathered so far, in 0...size.
    private(set) var count = 0
    /// The parts gathered, in order: a chunk and the range of its bytes that belongs here.
    private var pieces: [(chunk: Chunk, range: Range<Int>)] = []

    /// Creates an empty accumulator for blocks of `size` bytes.
    ///
    /// - Parameter size: the block size in bytes; must be >= 1.
    init(size: Int) {
        precondition(size >= 1, "ChunkAccumulator size must be at least 1 byte")
        self.size = size
    }

    /// Whether a whole block is gathered.
    var isFull: Bool { count == size }

    /// Whether nothing is gathered.
    var isEmpty: Bool { count == 0 }

    /// Takes bytes of `chunk` from `offset` on until the block is full, the chunk is used up or
    /// `end` is reached.
    ///
    /// - Parameters:
    ///   - chunk: the chunk to take from.
    ///   - offset: the first byte of `chunk` not yet taken, in `0...chunk.count`.
    ///   - end: the offset in `chunk` to stop at, in `offset...chunk.count`; default the chunk's end.
    /// - Returns: the offset of the first byte of `chunk` not taken (`chunk.count` when all were).
    mutating func fill(from chunk: Chunk, at offset: Int, upTo end: Int? = nil) -> Int {
        let end = end ?? chunk.count
        precondition(offset >= 0 && offset <= end && end <= chunk.count, "offset out of the chunk")
        let taken = min(size - count, end - offset)
        guard taken > 0 else { return offset }
        pieces.append((chunk, offset..<(offset + taken)))
        count += taken
        return offset + taken
    }

    /// Moves everything `other` gathered to the end of this accumulator (references, not
    /// copies), emptying `other`.
    ///
    /// - Precondition: it fits: `count + other.count <= size`.
    mutating func append(_ other: inout ChunkAccumulator) {
        precondition(count + other.count <= size, "appended more than the block holds")
        pieces += other.pieces
        count += other.count
        other.pieces.removeAll(keepingCapacity: true)
        other.count = 0
    }

    /// The last `length` bytes gathered (all of them if fewer), in order, without taking them.
    func suffix(_ length: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        for piece in pieces.reversed() where bytes.count < length {
            let wanted = min(length - bytes.count, piece.range.count)
            piece.chunk.withUnsafeBytes { bytes.insert(contentsOf: $0[(piece.range.upperBound - wanted)..<piece.range.upperBound], at: 0) }
        }
        return bytes
    }

    /// Returns what was gathered (a full block, or less at the end of the input) as one chunk,
    /// and empties the accumulator.
    ///
    /// - Parameter granule: a copy's buffer is a multiple of this many bytes, so that copies
    ///   of varied sizes (the segments of an indexed gzip member) reuse the pool's buffers
    ///   instead of filling it with buffers of sizes never asked for again.
    /// - Returns: the gathered bytes in order: the chunk that was given when it alone makes all
    ///   of them, else a new chunk with a copy of them; an empty chunk when nothing was gathered.
    /// - Throws: ``FileError`` (`malloc`, `ENOMEM`) when memory for the copy cannot be had; the
    ///   accumulator is emptied all the same.
    mutating func take(granule: Int = 1) throws(FileError) -> Chunk {
        defer {
            pieces.removeAll(keepingCapacity: true)
            count = 0
        }
        if pieces.count == 1, pieces[0].range == 0..<pieces[0].chunk.count {
            return pieces[0].chunk
        }
        let pieces = self.pieces
        return try Chunk(allocating: (count + granule - 1) / granule * granule) { buffer in
            var written = 0
            for piece in pieces {
                piece.chunk.withUnsafeBytes { bytes in
                    let part = UnsafeRawBufferPointer(rebasing: bytes[piece.range])
                    UnsafeMutableRawBufferPointer(rebasing: buffer[written...]).copyMemory(from: part)
                }
                written += piece.range.count
            }
            return written
        }
    }
}
