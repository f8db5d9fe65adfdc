import Testing
@testable import Sluice
import SluiceTestSupport

/// Input chunk sizes from one byte to 1 MiB (STYLE §7).
let inputChunkSizes = [1, 7, 4096, 64 << 10, 1 << 20]

/// Enough data for a chunk size: small for byte-by-byte feeding, several chunks otherwise.
func dataSize(forChunkSize chunkSize: Int) -> Int {
    chunkSize < 4096 ? 20_000 : 3 << 20
}

@Suite struct GzipEncoderTests {
    @Test(
        .enabled(if: Tool.gzip != nil, "gzip is not installed"),
        arguments: [1, 6, 9], inputChunkSizes)
    func outputDecodesWithGzip(level: Int, chunkSize: Int) async throws {
        let data = sampleData(count: dataSize(forChunkSize: chunkSize), seed: UInt64(level))
        let outputChunkSize = 64 << 10
        let encoder = try GzipEncoder(level: CompressionLevel(level), outputChunkSize: outputChunkSize)
        let run = try await drive(encoder, data, chunkSize: chunkSize)
        #expect(run.largestChunk <= outputChunkSize)
        #expect(run.chunkCounts.dropLast().allSatisfy { $0 == outputChunkSize })
        #expect(run.summary.crc32 == CRC32(data).value)
        #expect(run.summary.warnings.isEmpty)

        let gzip = try await Tool.run(Tool.gzip!, ["-dc"], input: run.output)
        #expect(gzip.status == 0)
        #expect(gzip.output == data)

        let back = try await drive(GzipDecoder(), run.output, chunkSize: chunkSize)
        #expect(back.output == data)
        #expect(back.summary.crc32 == CRC32(data).value)
    }

    @Test(arguments: [1, 6, 9])
    func headerHasNoNameAndNoTime(level: Int) async throws {
        let data = sampleData(count: 10_000)
        let first = try await gzipped(data, level: CompressionLevel(level))
        let second = try await gzipped(data, level: CompressionLevel(level))
        #expect(first == second)
        // ID1 ID2 CM FLG MTIME(4) XFL OS (RFC 1952 §2.3.1); XFL 2 = best, 4 = fastest; OS 3 = Unix.
        let xfl: UInt8 = level == 9 ? 2 : level == 1 ? 4 : 0
        #expect(Array(first.prefix(10)) == [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, xfl, 3])
    }

    @Test(.enabled(if: Tool.gzip != nil, "gzip is not installed"))
    func emptyInputGivesATwentyByteMember() async throws {
        let run = try await drive(GzipEncoder(), [], chunkSize: 1)
        #expect(run.output.count == 20)
        #expect(run.summary.crc32 == 0)
        let test = try await Tool.run(Tool.gzip!, ["-t"], input: run.output)
        #expect(test.status == 0)
        let back = try await drive(GzipDecoder(), run.output, chunkSize: 1)
        #expect(back.output.isEmpty)
        #expect(back.summary == TransformSummary(crc32: 0))
    }

    @Test func emptyInputChunksAreAccepted() async throws {
        let encoder = try GzipEncoder()
        var output: [UInt8] = []
        try await encoder.process(Chunk([])) { output += $0.bytes }
        try await encoder.process(Chunk(Array("abc".utf8))) { output += $0.bytes }
        try await encoder.process(Chunk([])) { output += $0.bytes }
        let summary = try await encoder.finish { output += $0.bytes }
        #expect(summary.crc32 == CRC32(Array("abc".utf8)).value)
        #expect(try await drive(GzipDecoder(), output, chunkSize: 5).output == Array("abc".utf8))
    }

    @Test func tinyOutputChunksHoldTheWholeMember() async throws {
        let data = sampleData(count: 30_000)
        let run = try await drive(GzipEncoder(level: .fastest, outputChunkSize: 1), data, chunkSize: 4096)
        #expect(run.largestChunk == 1)
        #expect(try await drive(GzipDecoder(outputChunkSize: 1), run.output, chunkSize: 7).output == data)
    }

    @Test func compressionLevelsAreOneToNine() throws {
        #expect(CompressionLevel.default.value == 6)
        #expect(CompressionLevel.fastest.value == 1)
        #expect(CompressionLevel.best.value == 9)
        #expect(CompressionLevel(exactly: 0) == nil)
        #expect(CompressionLevel(exactly: 10) == nil)
        #expect(try CompressionLevel(9) == .best)
        #expect(throws: CompressionLevel.InvalidLevelError(value: -1)) { try CompressionLevel(-1) }
    }
}
