#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Sluice
import SluiceTestSupport

/// Hole chunks, and with `holes: .always` zero blocks, become holes of the destination with
/// its exact size; with `.never`, and where the destination cannot seek, zeros.
@Suite(.timeLimit(.minutes(3)))
struct FileSinkHoleTests {
    static let data = randomBytes(count: 10_000, seed: 7)

    static func write(_ chunks: [Chunk], to destination: Pathname, holes: FileChunks.HoleMode) async throws {
        let sink = try await FileSink.create(at: destination, options: .init(synchronizes: false, holes: holes))
        try await sink.write(contentsOf: chunks)
        try await sink.commit()
    }

    @Test(arguments: [true, false])
    func holeChunksBecomeHolesWithTheExactSize(endsInHole: Bool) async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out")
            var chunks = [Chunk(Self.data), .hole(count: 4 << 20), Chunk(Self.data)]
            if endsInHole { chunks.append(.hole(count: 3 << 20)) }
            try await Self.write(chunks, to: destination, holes: .auto)
            let expected = chunks.flatMap(\.bytes)
            #expect(try readFile(destination) == expected)
            #expect(try FileStatus.of(destination).size == Int64(expected.count))
            #expect(try allocatedBytes(destination) < 1 << 20, "holes have no blocks")
        }
    }

    @Test func neverWritesTheZeros() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out")
            let chunks = [Chunk(Self.data), .hole(count: 4 << 20)]
            try await Self.write(chunks, to: destination, holes: .never)
            #expect(try readFile(destination) == chunks.flatMap(\.bytes))
            #expect(try allocatedBytes(destination) >= 4 << 20)
        }
    }

    @Test func alwaysTurnsWholeZeroBlocksIntoHoles() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out")
            // Zeros that start mid-block: the partial blocks at either end stay data.
            let bytes = [UInt8](repeating: 1, count: 100) + [UInt8](repeating: 0, count: 8 << 20) + [1]
            let chunks = stride(from: 0, to: bytes.count, by: 1 << 20).map { Chunk(bytes[$0..<min($0 + (1 << 20), bytes.count)]) }
            try await Self.write(chunks, to: destination, holes: .always)
            #expect(try readFile(destination) == bytes)
            #expect(try allocatedBytes(destination) < 1 << 20)
            // With .auto, zeros written as data stay data.
            let dense = directory.appending("dense")
            try await Self.write(chunks, to: dense, holes: .auto)
            #expect(try allocatedBytes(dense) >= 8 << 20)
        }
    }

    @Test func aPipeGetsTheZeros() async throws {
        let pipe = try makePipe()
        let sink = DescriptorSink(pipe.write, path: "pipe")
        let chunks = [Chunk(Self.data), .hole(count: 20_000), Chunk([1, 2, 3])]
        try await sink.write(contentsOf: chunks)
        try pipe.write.close()
        #expect(try readAll(pipe.read) == chunks.flatMap(\.bytes))
        try pipe.read.close()
    }
}
