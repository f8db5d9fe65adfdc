import SluiceTestSupport
import Testing
@testable import Sluice

@Suite struct ChunkHoleTests {
    @Test(arguments: [0, 1, 4096, 3 << 20, 9 << 20])
    func aHoleReadsAsZerosAndHoldsNoMemory(count: Int) {
        let hole = Chunk.hole(count: count)
        #expect(hole.isHole)
        #expect(hole.count == count)
        #expect(hole.residentCount == 0)
        #expect(hole.withUnsafeBytes { $0.allSatisfy { $0 == 0 } })
        #expect(hole == Chunk([UInt8](repeating: 0, count: count)))
        #expect(!Chunk([UInt8](repeating: 0, count: count)).isHole)
    }

    @Test func aChannelOfHolesWeighsNothing() async throws {
        let channel = BoundedChannel<Chunk>(capacity: 4, byteBudget: 1)
        try await channel.send(.hole(count: 1 << 20))
        try await channel.send(.hole(count: 1 << 20))
        #expect(channel.statistics.bytesBuffered == 0)
        #expect(channel.statistics.elementsBuffered == 2)
    }
}
