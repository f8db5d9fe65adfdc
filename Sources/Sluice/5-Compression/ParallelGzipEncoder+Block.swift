import CZlib

extension ParallelGzipEncoder {
    /// One block of input on its way to a worker.
    struct Block: Sendable {
        /// The uncompressed bytes: ``ParallelGzipEncoder/blockSize`` of them, fewer only in the
        /// last block.
        var data: Chunk
        /// The block before this one, whose last 32 KiB are this block's history; `nil` for the
        /// first block.
        var previous: Chunk?
        /// Whether this is the last block: its deflate data ends the stream (`Z_FINISH`).
        var isLast: Bool
        /// The offset of the block's first byte in the uncompressed input (for errors).
        var offset: Int64
    }

    /// A block's compressed form, as a worker hands it back.
    struct CompressedBlock: Sendable {
        /// The raw deflate data, in order: one chunk, or more if zlib's bound was not enough.
        var pieces: [Chunk]
        /// The CRC-32 of the block's uncompressed bytes.
        var crc32: UInt32
        /// The count of the block's uncompressed bytes.
        var count: Int
        /// Whether the block was written as stored blocks (``IncompressibleData``).
        var isStored: Bool
    }

    /// One worker's compressor: a raw deflate stream made at its first block and reset for each
    /// one after (`deflateReset` keeps zlib's memory: no allocation per block).
    ///
    /// Each block is compressed on its own with the last 32 KiB of the input before it as its
    /// dictionary (`deflateSetDictionary`), so its output depends on the block, that history,
    /// the level and whether it is the last, never on the worker or the thread count. A block
    /// that is not the last ends with `Z_SYNC_FLUSH` (an empty stored block, RFC 1951 §3.2.4):
    /// its data ends on a byte boundary, with the final-block bit clear, so the blocks' data
    /// concatenated is one deflate stream. The last ends with `Z_FINISH` (the final-block bit).
    ///
    /// A block that ``IncompressibleData`` finds deflate cannot shrink (random or already
    /// compressed bytes) is written as stored blocks by a second stream at level 0, with the
    /// same flush: the same size within a few bytes, without deflate's search for matches.
    /// The choice depends on the block's bytes alone, so the output stays deterministic.
    ///
    /// Concurrency: confined to its worker's thread.
    final class Deflater {
        /// The history a block is primed with: deflate's window (RFC 1951 §2: distances reach
        /// back 32,768 bytes).
        static let historySize = 32 << 10

        private let level: CompressionLevel
        private let allocator: ZStream.Allocator?
        private var deflateStream: ZStream?
        private var storedStream: ZStream?
        /// The capacity of an output chunk: zlib's bound for a full block, and room for the
        /// flush marker. Fixed per block size, so how output is cut never depends on anything
        /// else.
        private var outputCapacity = 0
        private let blockSize: Int

        init(level: CompressionLevel, blockSize: Int, allocator: ZStream.Allocator?) {
            self.level = level
            self.blockSize = blockSize
            self.allocator = allocator
        }

        /// Compresses one block.
        ///
        /// - Throws: ``GzipError`` of kind ``GzipError/Kind/zlib(code:)`` when zlib cannot make
        ///   its state (`Z_MEM_ERROR`), with the block's offset; ``FileError`` (`ENOMEM`) when
        ///   memory for the output runs out.
        func compress(_ block: Block) throws -> CompressedBlock {
            let isStored = block.data.withUnsafeBytes { IncompressibleData.contains($0) }
            let stream = try isStored ? stored(at: block.offset) : deflater(at: block.offset)
            stream.resetDeflate()
            if !isStored, let previous = block.previous {
                previous.withUnsafeBytes { stream.setDictionary(UnsafeRawBufferPointer(rebasing: $0.suffix(Self.historySize))) }
            }
            var crc = CRC32()
            block.data.withUnsafeBytes { crc.update($0) }
            let flush = block.isLast ? Z_FINISH : Z_SYNC_FLUSH
            var pieces: [Chunk] = []
            try block.data.withUnsafeBytes { (input) throws(FileError) in
                var consumed = 0
                var isDone = false
                while !isDone {
                    pieces.append(try Chunk(allocating: outputCapacity) { output in
                        var produced = 0
                        while !isDone && produced < output.count {
                            let step = stream.deflate(
                                UnsafeRawBufferPointer(rebasing: input[consumed...]),
                                into: UnsafeMutableRawBufferPointer(rebasing: output[produced...]), flush: flush)
                            precondition(
                                step.code == Z_OK || step.code == Z_STREAM_END || step.code == Z_BUF_ERROR,
                                "deflate failed with \(step.code)")
                            precondition(step.consumed > 0 || step.produced > 0, "deflate made no progress")
                            consumed += step.consumed
                            produced += step.produced
                            // zlib's rule: a flush is complete once deflate returns with room left.
                            isDone = block.isLast
                                ? step.code == Z_STREAM_END
                                : consumed == input.count && produced < output.count
                        }
                        return produced
                    })
                }
            }
            return CompressedBlock(pieces: pieces, crc32: crc.value, count: block.data.count, isStored: isStored)
        }

        /// The stream at the encoder's level, made on first use.
        private func deflater(at offset: Int64) throws(GzipError) -> ZStream {
            if let deflateStream { return deflateStream }
            let stream = try start(.rawDeflate(level), at: offset)
            // Room for the empty stored block of Z_SYNC_FLUSH (at most 5 bytes) and zlib's
            // advice to leave more than 6 bytes free at a flush.
            outputCapacity = stream.deflateBound(forInputCount: blockSize) + 16
            deflateStream = stream
            return stream
        }

        /// The level-0 stream, made on first use; its output fits the same capacity.
        private func stored(at offset: Int64) throws(GzipError) -> ZStream {
            _ = try deflater(at: offset)
            if let storedStream { return storedStream }
            let stream = try start(.rawStored, at: offset)
            storedStream = stream
            return stream
        }

        private func start(_ mode: ZStream.Mode, at offset: Int64) throws(GzipError) -> ZStream {
            do throws(GzipError) {
                return try ZStream(mode, allocator: allocator)
            } catch {
                throw GzipError(error.kind, offset: offset, zlibMessage: error.zlibMessage)
            }
        }
    }
}
