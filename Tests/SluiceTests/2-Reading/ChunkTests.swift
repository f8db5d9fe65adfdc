import SluiceTestSupport
import Testing
@testable import Sluice

@Suite struct ChunkTests {
    @Test func initializerDecidesTheCount() {
        let chunk = Chunk(capacity: 8) { buffer in
            for i in 0..<3 { buffer[i] = UInt8(i + 1) }
            return 3
        }
        #expect(chunk.bytes == [1, 2, 3])
        #expect(chunk.count == 3)
    }
}
