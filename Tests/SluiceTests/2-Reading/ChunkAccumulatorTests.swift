import SluiceTestSupport
import Testing
@testable import Sluice

@Suite struct ChunkAccumulatorTests {
    /// Any chunking of the input gives the same blocks: full ones of the size, then the rest.
    @Test(arguments: [1, 7, 100, 256, 1000, 5000])
    func blocksAreTheSameWhateverTheChunks(chunkSize: Int) throws {
        let data = randomBytes(count: 2600, seed: 7)
        var accumulator = ChunkAccumulator(size: 256)
        var blocks: [[UInt8]] = []
        for start in stride(from: 0, to: data.count, by: chunkSize) {
            let chunk = Chunk(data[start..<min(start + chunkSize, data.count)])
            var offset = 0
            while offset < chunk.count {
                offset = accumulator.fill(from: chunk, at: offset)
                if accumulator.isFull { blocks.append(try accumulator.take().bytes) }
            }
        }
        #expect(accumulator.count == 2600 % 256)
        blocks.append(try accumulator.take().bytes)
        #expect(accumulator.isEmpty)
        #expect(blocks.dropLast().allSatisfy { $0.count == 256 })
        #expect(blocks.flatMap { $0 } == data)
    }

    /// A chunk that is exactly one block is handed on, not copied.
    @Test func aWholeChunkIsTakenWithoutACopy() throws {
        let chunk = Chunk(randomBytes(count: 64, seed: 1))
        var accumulator = ChunkAccumulator(size: 64)
        #expect(accumulator.fill(from: chunk, at: 0) == 64)
        #expect(accumulator.isFull)
        #expect(try accumulator.take().storage === chunk.storage)
        #expect(accumulator.fill(from: chunk, at: 64) == 64)
        #expect(try accumulator.take().isEmpty)
    }
}
