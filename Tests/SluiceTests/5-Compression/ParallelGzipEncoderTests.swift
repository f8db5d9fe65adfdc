import CZlib
import Testing
@testable import Sluice
import SluiceTestSupport

/// Half text, half random bytes, so blocks both compress well and do not.
private func mixedSample(count: Int, seed: UInt64 = 0x5EED) -> [UInt8] {
    let text = sampleData(count: count, seed: seed)
    let noise = randomBytes(count: count, seed: seed)
    var data: [UInt8] = []
    data.reserveCapacity(count)
    for start in stride(from: 0, to: count, by: 50_000) {
        let end = min(start + 50_000, count)
        data += (start / 50_000) % 2 == 0 ? text[start..<end] : noise[start..<end]
    }
    return data
}

private struct EmitFailure: Error, Equatable {}

private func makeEncoder(
    level: CompressionLevel = .default, threads: Int, blockSize: Int = ParallelGzipEncoder.minimumBlockSize,
    outputChunkSize: Int = 64 << 10
) -> ParallelGzipEncoder {
    ParallelGzipEncoder(level: level, threadCount: threads, blockSize: blockSize, outputChunkSize: outputChunkSize)
}

@Suite(.timeLimit(.minutes(4)))
struct ParallelGzipEncoderTests {
    /// The output depends on the input, the level and the block size only.
    @Test(arguments: [1, 6, 9])
    func outputIsTheSameForAnyThreadCountAndChunking(level: Int) async throws {
        let data = mixedSample(count: 1_000_003, seed: UInt64(level))
        let level = try CompressionLevel(level)
        let reference = try await drive(makeEncoder(level: level, threads: 1), data, chunkSize: 1 << 20)
        #expect(reference.summary == TransformSummary(crc32: CRC32(data).value))
        #expect(try await drive(GzipDecoder(), reference.output, chunkSize: 64 << 10).output == data)
        for threads in [1, 2, 4] {
            for chunkSize in [4096, 64 << 10, 1 << 20] {
                let run = try await drive(makeEncoder(level: level, threads: threads), data, chunkSize: chunkSize)
                #expect(run.output == reference.output, "\(threads) threads, chunks of \(chunkSize)")
                #expect(run.summary == reference.summary)
            }
        }
    }

    @Test(.enabled(if: Tool.gzip != nil && Tool.pigz != nil, "gzip or pigz is not installed"), arguments: [1, 6, 9])
    func gzipAndPigzDecodeTheOutput(level: Int) async throws {
        let data = mixedSample(count: 700_001, seed: 42)
        let run = try await drive(
            makeEncoder(level: CompressionLevel(level), threads: 3, blockSize: 64 << 10), data, chunkSize: 4096)
        for tool in [Tool.gzip!, Tool.pigz!] {
            let decoded = try await Tool.run(tool, ["-dc"], input: run.output)
            #expect(decoded.status == 0, "\(tool)")
            #expect(decoded.output == data, "\(tool)")
        }
        let test = try await Tool.run(Tool.gzip!, ["-t"], input: run.output)
        #expect(test.status == 0)
    }

    /// The last block ends the stream wherever the input ends: no input, one byte, one block
    /// less a byte, one block exactly, one block and a byte, two blocks.
    @Test(.enabled(if: Tool.gzip != nil && Tool.pigz != nil, "gzip or pigz is not installed"),
        arguments: [0, 1, 32767, 32768, 32769, 65536, 65537])
    func inputsEndingAroundABlockBoundaryDecode(count: Int) async throws {
        let data = mixedSample(count: count, seed: UInt64(count))
        let one = try await drive(makeEncoder(threads: 1), data, chunkSize: 5000)
        let three = try await drive(makeEncoder(threads: 3), data, chunkSize: 32768)
        #expect(three.output == one.output)
        #expect(one.summary.crc32 == CRC32(data).value)
        if count == 0 { #expect(one.output.count == 20) }
        let back = try await drive(GzipDecoder(), one.output, chunkSize: 4096)
        #expect(back.output == data)
        for tool in [Tool.gzip!, Tool.pigz!] {
            let decoded = try await Tool.run(tool, ["-dc"], input: one.output)
            #expect(decoded.status == 0, "\(tool)")
            #expect(decoded.output == data, "\(tool)")
        }
    }

    /// The same header as the single-stream encoder: no name, MTIME 0, XFL for the level, OS 3.
    @Test(arguments: [1, 6, 9])
    func headerIsTheOneGzipEncoderWrites(level: Int) async throws {
        let data = sampleData(count: 10_000)
        let level = try CompressionLevel(level)
        let parallel = try await drive(makeEncoder(level: level, threads: 2), data, chunkSize: 4096).output
        let single = try await gzipped(data, level: level)
        #expect(Array(parallel.prefix(10)) == Array(single.prefix(10)))
        #expect(Array(parallel.suffix(8)) == Array(single.suffix(8)), "the same CRC-32 and ISIZE")
    }

    /// Priming each block with the 32 KiB before it keeps the size of one stream.
    @Test func compressesAsWellAsOneStream() async throws {
        let data = sampleData(count: 2_000_000)
        let parallel = try await drive(
            makeEncoder(threads: 2, blockSize: ParallelGzipEncoder.defaultBlockSize), data, chunkSize: 1 << 20).output
        let single = try await gzipped(data)
        #expect(Double(parallel.count) <= Double(single.count) * 1.005, "\(parallel.count) against \(single.count)")
    }

    @Test(arguments: [1, 1000])
    func outputChunksHaveTheirSize(outputChunkSize: Int) async throws {
        let data = mixedSample(count: 100_000)
        let run = try await drive(makeEncoder(threads: 2, outputChunkSize: outputChunkSize), data, chunkSize: 4096)
        #expect(run.chunkCounts.dropLast().allSatisfy { $0 == outputChunkSize })
        #expect(run.largestChunk == outputChunkSize)
        #expect(try await drive(GzipDecoder(), run.output, chunkSize: 999).output == data)
    }

    /// Random blocks are written stored, without deflate's search for matches; text blocks
    /// between them still compress, the whole decodes, and the choice is the same for any
    /// thread count.
    @Test func randomBlocksAreStored() async throws {
        let block = 64 << 10
        let text = sampleData(count: 2 * block)
        let noise = randomBytes(count: 2 * block, seed: 99)
        let data = Array(noise[..<block] + text[..<block] + noise[block...] + text[block...])
        let encoder = makeEncoder(threads: 2, blockSize: block)
        let run = try await drive(encoder, data, chunkSize: 10_000)
        #expect(encoder.writtenBlockCount == 4)
        #expect(encoder.storedBlockCount == 2)
        // Stored: 64 KiB is two deflate stored blocks of 5 bytes of header each, and the
        // empty one of the flush; the text as on its own, within the dictionary's effect.
        let textAlone = try await drive(makeEncoder(threads: 1, blockSize: block), text, chunkSize: 1 << 20)
        #expect(run.output.count <= 2 * (block + 15) + textAlone.output.count + 1_024)
        #expect(try await drive(GzipDecoder(), run.output, chunkSize: 4096).output == data)
        let one = try await drive(makeEncoder(threads: 1, blockSize: block), data, chunkSize: 1 << 20)
        #expect(one.output == run.output)
    }

    @Test func defaults() {
        let encoder = ParallelGzipEncoder()
        #expect(encoder.blockSize == 256 << 10)
        #expect(encoder.threadCount == ProcessorAffinity.availableProcessorCount())
        #expect(encoder.maximumBlocksInFlight == 4 * encoder.threadCount)
        #expect(encoder.level == .default)
    }

    /// zlib failing to allocate a worker's stream fails the encoder with the block's offset.
    @Test func aWorkersZlibErrorIsThrown() async throws {
        let failing = ZStream.Allocator(allocate: { _, _, _ in nil }, free: { _, _ in })
        let encoder = ParallelGzipEncoder(
            level: .default, threadCount: 2, blockSize: 32 << 10, outputChunkSize: 4096, maximumBlocksInFlight: nil, indexing: .none,
            allocator: failing)
        let error = await #expect(throws: GzipError.self) {
            try await drive(encoder, sampleData(count: 100_000), chunkSize: 4096)
        }
        #expect(error?.kind == .zlib(code: Z_MEM_ERROR))
        #expect(error.map { $0.offset % (32 << 10) == 0 } == true)
    }

    /// What `emit` throws comes back unchanged, after the workers stopped.
    @Test func anErrorFromEmitIsRethrown() async throws {
        let encoder = makeEncoder(threads: 2, outputChunkSize: 100)
        let data = Chunk(mixedSample(count: 300_000))
        await #expect(throws: EmitFailure()) {
            try await encoder.process(data) { _ in throw EmitFailure() }
            _ = try await encoder.finish { _ in throw EmitFailure() }
        }
    }
}
