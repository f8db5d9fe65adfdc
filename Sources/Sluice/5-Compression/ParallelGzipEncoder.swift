import CZlib

/// A ``ChunkTransform`` that compresses its input into one gzip member (RFC 1952) on several
/// threads at once, in the format of `pigz`.
///
/// The input is cut into blocks of exactly `blockSize` bytes (the last may be shorter),
/// whatever the sizes of the chunks it arrives in. An ``OrderedParallelStage`` of
/// `threadCount` workers raw-deflates the blocks concurrently, each primed with the last
/// 32 KiB of the input before it (`deflateSetDictionary`), so that matches reach across block
/// boundaries as in one stream; each block but the last ends with `Z_SYNC_FLUSH` on a byte
/// boundary, the last with `Z_FINISH`. The encoder writes the 10-byte header, the blocks' data
/// in input order, and the trailer: the CRC-32 combined from the blocks' own
/// (`crc32_combine`) and ISIZE. The output is one member that `gzip -d`, `pigz -d` and
/// ``GzipDecoder`` decode, and it depends only on the input, the level and the block size:
/// **byte-identical for any thread count** (one thread runs the same format) and any input
/// chunking.
///
/// **Access points.** Every 2 MiB of input (a multiple of the block size), a block is primed
/// with nothing, so a decoder can start there with zlib alone (<doc:IndexedGzip>). The
/// `sluice compress` command also reserves an index of these points in the header of a file
/// it writes, and fills it in before the commit; an encoder made with this initializer writes
/// the access points without the index.
///
/// The header carries no file name and an MTIME of 0 (RFC 1952 §2.3.1), as `gzip -n` writes it:
/// XFL as zlib writes it (2 at level 9, 4 at level 1, else 0), OS 3 (Unix). Empty input gives
/// a valid 20-byte member. Output leaves in chunks of exactly `outputChunkSize` bytes, except
/// the last, each awaited through `emit`.
///
/// **Block size.** The default is 256 KiB (``defaultBlockSize``), twice `pigz`'s 128 KiB: the
/// output hardly depends on the block size, and 256 KiB is the smallest block that costs no more
/// time than a larger one, while memory grows with the block (the measurements are in
/// <doc:ParallelStages>, "Block size").
///
/// **Data deflate cannot shrink.** A block whose bytes look random (a flat byte histogram and
/// no repeat within deflate's reach: encrypted or already compressed data) is written as
/// stored blocks, copied rather than searched for matches that are not there: the same size
/// within a few bytes, in a fraction of the time (<doc:ParallelStages>, "Data deflate cannot
/// shrink"). The choice depends on the block's bytes alone.
///
/// **Memory**, whatever the input's size, in bytes, with `B` the block size, `M` the blocks in
/// flight (`maximumBlocksInFlight`, default `4 × threadCount`) and `N` the thread count: at
/// most `M` blocks of input and their outputs (`B` and zlib's bound for `B`, about `B + B/1000`,
/// each), plus the block before the oldest (its history) and the block being gathered (`B`
/// each, referencing the input chunks it comes from), plus two zlib deflate states per thread
/// (about 256 KiB each at memory level 8: the level's, and level 0's for stored blocks, made
/// when first needed), plus one output chunk (`outputChunkSize`). With the
/// defaults on 2 threads: 8 × 512 KiB + 2 × 256 KiB + 4 × 256 KiB + 1 MiB, about 6.5 MiB.
///
/// ```swift
/// let encoder = ParallelGzipEncoder(level: .default, threadCount: 4)
/// let copy = Pipeline(from: source, to: sink, totalBytes: source.expectedSize, transform: {
///     ParallelGzipEncoder(threadCount: 4)
/// })
/// ```
///
/// Concurrency: not `Sendable`; confined to one stage, which calls ``process(_:emit:)`` per
/// input chunk and then ``finish(emit:)`` once, never concurrently. The CPU work runs on the
/// workers' threads; the calling task only gathers blocks, waits for results (suspending, not
/// blocking) and copies compressed bytes into output chunks. Backpressure: while `emit`
/// suspends, no block is submitted, and once `maximumBlocksInFlight` blocks are in flight the
/// encoder waits for the oldest before reading on, so a slow sink slows the reader. On any
/// error (cancellation through `emit`, a worker's error) the encoder stops its workers and waits
/// for them before it throws: nothing runs on after it. An encoder released without
/// ``finish(emit:)`` (its pipeline failed before it) stops its workers too, without waiting: a
/// block being compressed ends on its worker's thread, its result dropped.
public final class ParallelGzipEncoder: ChunkTransform {
    /// The block size when none is given: 256 KiB (`pigz -b 256`; `pigz`'s own default is 128 KiB).
    public static let defaultBlockSize = 256 << 10

    /// The smallest block size: 32 KiB, deflate's window, so a block's history is always the
    /// block before it alone.
    package static let minimumBlockSize = 32 << 10

    /// The largest block size: 512 MiB, as `pigz`.
    package static let maximumBlockSize = 512 << 20

    /// The compression level of every block.
    package let level: CompressionLevel

    /// The count of threads that compress (>= 1).
    package let threadCount: Int

    /// The uncompressed size of each block but the last, in bytes.
    package let blockSize: Int

    /// The largest output chunk in bytes; every chunk but the last has exactly this size.
    package let outputChunkSize: Int

    /// The most blocks submitted and not yet written out at once (see the memory bound above).
    package var maximumBlocksInFlight: Int { stage.maximumInFlight }

    /// How a member is laid out for a decoder that splits it (<doc:IndexedGzip>).
    package enum Indexing: Sendable, Hashable {
        /// Every block primed with the one before: the format before 0.2 (`--no-index`).
        case none
        /// An access point (a block primed with nothing) every
        /// `GzipIndex.segmentSize(inputSize:blockSize:)` bytes of input, for an input of
        /// `inputSize` bytes (`nil`: not known); with `reservesIndex`, a header subfield
        /// reserved for the index, which ``finish(emit:)`` returns as the summary's patch for
        /// the sink to write (an input of one segment or less has none).
        case accessPoints(inputSize: Int64?, reservesIndex: Bool)
    }

    /// The uncompressed bytes between two access points; `nil` without access points.
    package let segmentSize: Int64?
    /// The segments the header's index was reserved for (0: no index).
    package let reservedSegments: Int
    /// The segments written out so far, and the one being written.
    private var segments: [GzipIndex.Segment] = []
    private var segment = (compressed: Int64(0), uncompressed: Int64(0), crc32: UInt32(0))

    private let stage: OrderedParallelStage<Block, CompressedBlock>
    /// The next block, as it is gathered from the input chunks.
    private var gathered: ChunkAccumulator
    /// A full block held until more input shows it is not the last.
    private var held: Chunk?
    /// The last block submitted: the history of the next one.
    private var previous: Chunk?
    /// Uncompressed bytes submitted so far.
    private var submittedBytes: Int64 = 0
    /// The CRC-32 and size of the uncompressed bytes whose compressed data was written out.
    private(set) var crc32: UInt32 = 0
    private(set) var writtenBytes: Int64 = 0
    /// The blocks written out so far, and how many of them were stored.
    private(set) var writtenBlockCount = 0
    private(set) var storedBlockCount = 0
    /// Output bytes not yet emitted: the header, the blocks' data, the trailer.
    private let output: OutputChunkBuffer
    private var hasHeader = false
    private var isFinished = false

    /// The processors this process may run on (`sched_getaffinity(2)`, as `nproc`), at least 1:
    /// the default ``init(level:threadCount:blockSize:outputChunkSize:maximumBlocksInFlight:)``'s
    /// threads, as `pigz`'s default.
    public static var defaultThreadCount: Int { ProcessorAffinity.availableProcessorCount() }

    /// Creates an encoder that starts a new gzip member, and starts its threads.
    ///
    /// - Parameters:
    ///   - level: the deflate level, 1...9; `.default` (6) as `gzip`.
    ///   - threadCount: the threads that compress; must be >= 1. Default
    ///     ``defaultThreadCount``: the processors this process may run on.
    ///   - blockSize: bytes per block, from 32 KiB to 512 MiB. Default
    ///     ``defaultBlockSize``. The output depends on it.
    ///   - outputChunkSize: the largest output chunk in bytes; must be > 0. Default 1 MiB.
    ///   - maximumBlocksInFlight: the most blocks in flight, >= 1; `nil` (the default) is four
    ///     times `threadCount`, as ``OrderedParallelStage``'s default.
    public convenience init(
        level: CompressionLevel = .default, threadCount: Int = ParallelGzipEncoder.defaultThreadCount,
        blockSize: Int = ParallelGzipEncoder.defaultBlockSize, outputChunkSize: Int = 1 << 20, maximumBlocksInFlight: Int? = nil
    ) {
        self.init(
            level: level, threadCount: threadCount, blockSize: blockSize, outputChunkSize: outputChunkSize,
            maximumBlocksInFlight: maximumBlocksInFlight, indexing: .accessPoints(inputSize: nil, reservesIndex: false), allocator: nil)
    }

    /// An encoder laid out as `indexing` says (the `sluice compress` command's: its access
    /// points and index, or `--no-index`); the other parameters as the public initializer's.
    package convenience init(
        level: CompressionLevel, threadCount: Int, blockSize: Int, outputChunkSize: Int, maximumBlocksInFlight: Int?,
        indexing: Indexing
    ) {
        self.init(
            level: level, threadCount: threadCount, blockSize: blockSize, outputChunkSize: outputChunkSize,
            maximumBlocksInFlight: maximumBlocksInFlight, indexing: indexing, allocator: nil)
    }

    init(
        level: CompressionLevel, threadCount: Int, blockSize: Int, outputChunkSize: Int, maximumBlocksInFlight: Int?,
        indexing: Indexing, allocator: ZStream.Allocator?
    ) {
        precondition(threadCount >= 1, "threadCount must be >= 1")
        precondition(
            (Self.minimumBlockSize...Self.maximumBlockSize).contains(blockSize),
            "blockSize must be in \(Self.minimumBlockSize)...\(Self.maximumBlockSize), got \(blockSize)")
        precondition(outputChunkSize > 0, "outputChunkSize must be > 0")
        self.level = level
        self.threadCount = threadCount
        self.blockSize = blockSize
        self.outputChunkSize = outputChunkSize
        switch indexing {
        case .none:
            (segmentSize, reservedSegments) = (nil, 0)
        case .accessPoints(let inputSize, let reservesIndex):
            let size = GzipIndex.segmentSize(inputSize: inputSize, blockSize: blockSize)
            let count = inputSize.map { GzipIndex.segmentCount(inputSize: $0, segmentSize: size) } ?? 0
            (segmentSize, reservedSegments) = (size, reservesIndex && count > 1 ? count : 0)
        }
        stage = OrderedParallelStage(
            workerCount: threadCount, maximumInFlight: maximumBlocksInFlight, label: "sluice.gzip",
            makeWorker: {
                let deflater = Deflater(level: level, blockSize: blockSize, allocator: allocator)
                return { block in try deflater.compress(block) }
            })
        gathered = ChunkAccumulator(size: blockSize)
        output = OutputChunkBuffer(capacity: outputChunkSize)
    }

    /// Gathers one input chunk into blocks and submits each full block once more input follows
    /// it; emits the compressed data of every block already finished, in order.
    ///
    /// - Parameters:
    ///   - chunk: the next uncompressed bytes (may be empty).
    ///   - emit: receives each full output chunk; suspends under backpressure.
    /// - Throws: a worker's ``GzipError`` (zlib could not allocate its state), a ``FileError``
    ///   of code ``FileError/Code/outOfMemory`` when memory for a block or an output chunk runs
    ///   out, or what `emit` throws, unchanged; `CancellationError` when the task is cancelled
    ///   while it waits for a block. The workers are stopped first.
    /// - Precondition: ``finish(emit:)`` has not been called.
    public func process(_ chunk: Chunk, emit: (Chunk) async throws -> Void) async throws {
        precondition(!isFinished, "ParallelGzipEncoder.process called after finish")
        do {
            try output.allocate()
            var offset = 0
            while offset < chunk.count {
                if let block = held {
                    held = nil
                    try await submit(block, isLast: false, emit: emit)
                }
                offset = gathered.fill(from: chunk, at: offset)
                if gathered.isFull { held = try gathered.take() }
            }
        } catch {
            await stage.close()
            throw error
        }
    }

    /// Ends the member: submits the last block, emits the compressed data of every block in
    /// order, then the 8-byte trailer (CRC-32 and ISIZE, RFC 1952 §2.3.1).
    ///
    /// - Parameter emit: receives each remaining output chunk.
    /// - Returns: a summary whose `crc32` is the CRC-32 of all uncompressed input (the value
    ///   stored in the trailer), and, with an index reserved, the index as its patch (unless
    ///   the input outgrew the reservation: the subfield then stays marked unused); no warnings.
    /// - Throws: as ``process(_:emit:)``.
    /// - Precondition: called once.
    public func finish(emit: (Chunk) async throws -> Void) async throws -> TransformSummary {
        precondition(!isFinished, "ParallelGzipEncoder.finish called twice")
        isFinished = true
        do {
            try output.allocate()
            let last = try held ?? gathered.take()
            held = nil
            try await submit(last, isLast: true, emit: emit)
            stage.finish()
            while let block = try await stage.next() {
                try await write(block, emit: emit)
            }
        } catch {
            await stage.close()
            throw error
        }
        await stage.close()
        try await append(Chunk(trailer), emit: emit)
        if !output.isEmpty {
            try await emit(try output.take())
        }
        var summary = TransformSummary(crc32: crc32)
        summary.patch = indexPatch()
        return summary
    }

    /// Submits `data` as the next block, first writing out every block already finished and,
    /// while the stage is full, waiting for the oldest.
    private func submit(_ data: Chunk, isLast: Bool, emit: (Chunk) async throws -> Void) async throws {
        while let block = try stage.nextIfReady() {
            try await write(block, emit: emit)
        }
        while stage.isFull {
            guard let block = try await stage.next() else { preconditionFailure("a full stage ended") }
            try await write(block, emit: emit)
        }
        // An access point: a block primed with nothing.
        let startsSegment = segmentSize.map { submittedBytes % $0 == 0 } ?? false
        let block = Block(data: data, previous: startsSegment ? nil : previous, isLast: isLast, offset: submittedBytes)
        previous = data
        submittedBytes += Int64(data.count)
        try await stage.submit(block)
    }

    /// Adds a finished block's data to the output (after the header, before the first block),
    /// emitting each output chunk that fills up.
    private func write(_ block: CompressedBlock, emit: (Chunk) async throws -> Void) async throws {
        if !hasHeader {
            hasHeader = true
            try await append(Chunk(header), emit: emit)
        }
        crc32 = CRC32.combine(crc32, block.crc32, secondLength: Int64(block.count))
        writtenBytes += Int64(block.count)
        recordSegment(block)
        writtenBlockCount += 1
        if block.isStored { storedBlockCount += 1 }
        for piece in block.pieces {
            try await append(piece, emit: emit)
        }
    }

    /// Copies `chunk` into the output, emitting each output chunk that fills up.
    private func append(_ chunk: Chunk, emit: (Chunk) async throws -> Void) async throws {
        var position = 0
        while position < chunk.count {
            position += chunk.withUnsafeBytes { output.append(UnsafeRawBufferPointer(rebasing: $0[position...])) }
            if output.isFull {
                try await emit(try output.take())
            }
        }
    }
}

extension ParallelGzipEncoder {
    /// ID1 ID2 CM FLG MTIME(4) XFL OS (RFC 1952 §2.3.1), as zlib writes them with no file name
    /// and MTIME 0: XFL 2 at level 9, 4 at level 1, else 0; OS 3 (Unix). With an index
    /// reserved, FLG has FEXTRA set and the extra field follows: its XLEN, then the index's
    /// subfield, not filled in yet (`GzipIndex.reserved(segments:)`).
    var header: [UInt8] {
        let extraFlags: UInt8 = level == .best ? 2 : level == .fastest ? 4 : 0
        guard reservedSegments > 0 else { return [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, extraFlags, 3] }
        let subfield = GzipIndex.reserved(segments: reservedSegments)
        var header: [UInt8] = [0x1F, 0x8B, 8, 0x04, 0, 0, 0, 0, extraFlags, 3]
        header.appendLittleEndian(UInt16(4 + subfield.count))
        header += [GzipIndex.subfieldID.0, GzipIndex.subfieldID.1]
        header.appendLittleEndian(UInt16(subfield.count))
        return header + subfield
    }

    /// Where the index's subfield data starts: after the 10 fixed bytes, XLEN, SI1 SI2 and LEN.
    static let indexOffset: Int64 = 16

    /// Adds a block written out to its segment, and closes the segment at its end.
    func recordSegment(_ block: CompressedBlock) {
        guard let segmentSize else { return }
        segment.compressed += Int64(block.pieces.reduce(0) { $0 + $1.count })
        segment.crc32 = CRC32.combine(segment.crc32, block.crc32, secondLength: Int64(block.count))
        segment.uncompressed += Int64(block.count)
        if segment.uncompressed == segmentSize { closeSegment() }
    }

    private func closeSegment() {
        // A segment longer than 4 GiB compressed cannot be listed: the index is not written.
        let length = UInt32(exactly: segment.compressed) ?? 0
        segments.append(GzipIndex.Segment(compressedLength: length, crc32: segment.crc32))
        segment = (0, 0, 0)
    }

    /// The index to write over the reserved subfield, once every block is written out; `nil`
    /// without a reservation, or when the input outgrew it (the subfield stays marked unused).
    func indexPatch() -> OutputPatch? {
        guard reservedSegments > 0, let segmentSize else { return nil }
        if segment.uncompressed > 0 { closeSegment() }
        guard segments.count <= reservedSegments, writtenBytes > 0, !segments.contains(where: { $0.compressedLength == 0 }) else {
            return nil
        }
        let index = GzipIndex(segmentSize: segmentSize, totalSize: writtenBytes, segments: segments)
        return OutputPatch(
            offset: Self.indexOffset, bytes: index.encoded(length: GzipIndex.subfieldLength(segments: reservedSegments)))
    }

    /// CRC32 and ISIZE (the size modulo 2^32), little-endian (RFC 1952 §2.3.1).
    var trailer: [UInt8] {
        [crc32, UInt32(truncatingIfNeeded: writtenBytes)].flatMap { value in
            (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
    }
}

extension ParallelGzipEncoder: TakesLongHoles, VerifiableTransform {
    /// Read back through a ``GzipDecoder`` of its output chunk size, which also checks the
    /// member's CRC-32 and ISIZE (RFC 1952 §2.3.1); its summary's CRC-32 is its input's.
    public var verification: TransformVerification {
        .encodesInput { [outputChunkSize] in GzipDecoder(outputChunkSize: outputChunkSize) }
    }
}
