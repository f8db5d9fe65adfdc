import SluiceTestSupport
import Testing
@testable import Sluice

@Suite(.timeLimit(.minutes(3)))
struct PacedChunksTests {
    @Test func chunksComeUnchangedAtTheRate() async throws {
        let chunks = (0..<8).map { Chunk([UInt8](repeating: UInt8($0), count: 1 << 20)) }
        let clock = TestClock()
        var received: [Chunk] = []
        for try await chunk in PacedChunks(ChunkList(chunks), limiter: RateLimiter(bytesPerSecond: 1 << 20, clock: clock)) {
            received.append(chunk)
        }
        #expect(received == chunks)
        #expect(clock.sleeps == Array(repeating: .seconds(1), count: 7))
        #expect(clock.elapsed == .seconds(7))
    }

    /// Two sequences given one limiter share its rate: the second's first chunk is charged
    /// after the first's last, not let through as the first chunk of a fresh bucket.
    @Test func sequencesSharingALimiterShareItsRate() async throws {
        let chunks = (0..<4).map { Chunk([UInt8](repeating: UInt8($0), count: 1 << 20)) }
        let clock = TestClock()
        let limiter = RateLimiter(bytesPerSecond: 1 << 20, clock: clock)
        for _ in 0..<2 {
            for try await _ in PacedChunks(ChunkList(chunks), limiter: limiter) {}
        }
        #expect(clock.elapsed == .seconds(7))
    }

    /// A wait is a suspension that cancellation ends.
    @Test func cancellingTheConsumerEndsAWait() async throws {
        let chunks = (0..<3).map { _ in Chunk([UInt8](repeating: 1, count: 1024)) }
        let clock = StoppedClock()
        let paced = PacedChunks(ChunkList(chunks), limiter: RateLimiter(bytesPerSecond: 1, clock: clock))
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

