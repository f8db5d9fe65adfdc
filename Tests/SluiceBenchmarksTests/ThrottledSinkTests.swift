import Sluice
@testable import SluiceBenchmarks
import Testing

@Suite struct ThrottledSinkTests {
    /// A sink that keeps what it is given.
    actor RecordingSink: ChunkSink {
        private(set) var chunks: [Chunk] = []
        private(set) var events: [String] = []

        func write(_ chunk: Chunk) async throws {
            chunks.append(chunk)
            events.append("write")
        }

        func commit() async throws { events.append("commit") }
        func abort() async { events.append("abort") }
    }

    @Test func transferTimeIsExactToTheNanosecondRoundedDown() {
        #expect(Duration.transferTime(of: 0, atBytesPerSecond: 1) == .zero)
        #expect(Duration.transferTime(of: 1000, atBytesPerSecond: 1000) == .seconds(1))
        #expect(Duration.transferTime(of: 1, atBytesPerSecond: 3) == .nanoseconds(333_333_333))
        #expect(Duration.transferTime(of: 5, atBytesPerSecond: 2) == .milliseconds(2500))
    }

    /// Bytes × 10⁹ overflows `Int64` past about 8.6 GiB; the time of any byte count at any rate
    /// is still computed, without a trap.
    @Test func transferTimeOfHugeByteCountsDoesNotOverflow() {
        #expect(Duration.transferTime(of: 10 << 30, atBytesPerSecond: 200 << 20) == .milliseconds(51_200))
        #expect(Duration.transferTime(of: .max, atBytesPerSecond: 1) == .seconds(Int64.max))
        #expect(Duration.transferTime(of: .max, atBytesPerSecond: .max) == .seconds(1))
        #expect(Duration.transferTime(of: .max - 1, atBytesPerSecond: .max) == .nanoseconds(999_999_999))
        #expect(Duration.transferTime(of: .max, atBytesPerSecond: 3) == .seconds(Int64.max / 3) + .nanoseconds(333_333_333))
    }

    /// The clock's running total past 8.6 GiB: the wait is the total's time at the rate, less
    /// the (tiny) time since the first write.
    @Test func clockPastEightGibibytesAsksForTheWholeWait() async {
        let clock = ThrottledSink<RecordingSink>.Clock()
        let first = await clock.add(1 << 20, rate: 200 << 20)
        #expect(first == .milliseconds(5))
        let wait = await clock.add(10 << 30, rate: 200 << 20)
        #expect(wait <= .milliseconds(51_205))
        #expect(wait > .seconds(50))
        #expect(await clock.bytes == (10 << 30) + (1 << 20))
    }

    @Test func chunksArriveInOrderAndTheEndIsPassedOn() async throws {
        let base = RecordingSink()
        let sink = ThrottledSink(base, bytesPerSecond: nil)
        let chunks = (0..<5).map { Chunk([UInt8](repeating: UInt8($0), count: 100 + $0)) }
        for chunk in chunks { try await sink.write(chunk) }
        try await sink.commit()
        await sink.abort()
        #expect(await base.chunks == chunks)
        #expect(await base.events == Array(repeating: "write", count: 5) + ["commit", "abort"])
    }

    /// Three 1000-byte writes at 20,000 bytes per second end no sooner than 150 ms after the
    /// first began.
    @Test func writesTakeAtLeastTheirTimeAtTheRate() async throws {
        let base = RecordingSink()
        let sink = ThrottledSink(base, bytesPerSecond: 20_000)
        let start = ContinuousClock.now
        for _ in 0..<3 { try await sink.write(Chunk([UInt8](repeating: 7, count: 1000))) }
        #expect(ContinuousClock.now - start >= .milliseconds(150))
        #expect(await base.chunks.count == 3)
    }
}
