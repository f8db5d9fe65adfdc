#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Sluice
import SluiceTestSupport

/// A sparse file read as data chunks and hole chunks (`SEEK_DATA`/`SEEK_HOLE`).
@Suite(.timeLimit(.minutes(3)))
struct FileChunksHoleTests {
    static let extents: [(offset: Int64, bytes: [UInt8])] = [
        (0, randomBytes(count: 5000, seed: 1)),
        (1 << 20, randomBytes(count: 70_000, seed: 2)),
        (5 << 20, randomBytes(count: 4096, seed: 3)),
    ]

    static func collect(_ chunks: FileChunks) async throws -> [Chunk] {
        var collected: [Chunk] = []
        for try await chunk in chunks { collected.append(chunk) }
        return collected
    }

    @Test(arguments: [6 << 20, (5 << 20) + 4096, 9 << 20] as [Int64])
    func holesComeAsHoleChunksAndTheBytesAreTheFiles(size: Int64) async throws {
        try await withScratchDirectory { directory in
            let path = directory.appending("sparse")
            try writeSparseFile(path, size: size, extents: Self.extents)
            let chunks = try await Self.collect(try await FileChunks.open(path, chunkSize: 64 << 10))
            #expect(chunks.flatMap(\.bytes) == sparseContent(size: size, extents: Self.extents))
            // Every chunk is at most the chunk size, holes too: a `map` that makes data of a
            // hole holds no more than a data chunk.
            #expect(chunks.allSatisfy { $0.count <= 64 << 10 })
            // Every byte of data comes as data; most of the zeros as holes (file systems
            // allocate whole blocks, so a hole starts and ends at a block boundary).
            let holeBytes = chunks.filter(\.isHole).reduce(0) { $0 + $1.count }
            let dataBytes = Self.extents.reduce(0) { $0 + $1.bytes.count }
            #expect(holeBytes > 0)
            #expect(Int64(holeBytes) <= size - Int64(dataBytes))
            #expect(Int64(holeBytes) >= size - Int64(dataBytes) - 4 * (64 << 10))
        }
    }

    @Test func withoutFindingHolesEveryChunkIsData() async throws {
        try await withScratchDirectory { directory in
            let path = directory.appending("sparse")
            try writeSparseFile(path, size: 6 << 20, extents: Self.extents)
            let chunks = try await Self.collect(try await FileChunks.open(path, chunkSize: 1 << 20, findsHoles: false))
            #expect(!chunks.contains { $0.isHole })
            #expect(chunks.flatMap(\.bytes) == sparseContent(size: 6 << 20, extents: Self.extents))
        }
    }

    @Test func aFileThatIsOneHoleIsHolesToItsSize() async throws {
        try await withScratchDirectory { directory in
            let path = directory.appending("hole")
            try writeSparseFile(path, size: 130 << 20, extents: [])
            let chunks = try await Self.collect(try await FileChunks.open(path, chunkSize: 1 << 20))
            #expect(chunks.map(\.count) == Array(repeating: 1 << 20, count: 130))
            #expect(chunks.allSatisfy { $0.isHole })
            // The copier's own reader, whose holes no code of a user's sees, takes them 64 MiB at a time.
            let long = try await Self.collect(
                try await FileChunks.open(path, descriptor: nil, ownsDescriptor: true, chunkSize: 1 << 20, takesLongHoles: true, system: .live))
            #expect(long.map(\.count) == [64 << 20, 64 << 20, 2 << 20])
            #expect(long.allSatisfy { $0.isHole })
        }
    }
}
