import Testing
@testable import Sluice

@Suite(.timeLimit(.minutes(1)))
struct PacedChunksTests {
    @Test func chunksComeUnchangedAtTheRate() async throws {
        let chunks = (0..<8).map { Chunk([UInt8](repeating: UInt8($0), count: 1 << 20)) }
        let clock = TestClock()
        var received: [Chunk] = []
        for try await chunk in PacedChunks(ChunkList(chunks), bytesPerSecond: 1 << 20, clock: clock) {
            received.append(chunk)
        }
        #expect(received == chunks)
        #expect(clock.sleeps == Array(repeating: .seconds(1), count: 7))
        #expect(clock.elapsed == .seconds(7))
    }

    /// A wait is a suspension that cancellation ends.
    @Test func cancellingTheConsumerEndsAWait() async throws {
        let chunks = (0..<3).map { _ in Chunk([UInt8](repeating: 1, count: 1024)) }
        let clock = StoppedClock()
        let paced = PacedChunks(ChunkList(chunks), bytesPerSecond: 1, clock: clock)
        let consumer = Task {
            var count = 0
            for try await _ in paced { count += 1 }
            return count
        }
        await clock.firstSleep()
        consumer.cancel()
        await #expect(throws: CancellationError.self) { try await consumer.value }
    }
}

