import Testing
@testable import Sluice
import SluiceTestSupport

/// `--limit-rate` in the pipeline: the stage after the first channel is paced, on a clock that
/// moves only when slept on, so the waits are exact and no real time passes.
@Suite(.timeLimit(.minutes(3)))
struct PipelineRateLimitTests {
    static let chunkSize = 64 << 10
    static let chunks = (0..<16).map { Chunk(randomBytes(count: chunkSize, seed: UInt64($0))) }
    static let data = chunks.flatMap(\.bytes)

    /// 16 chunks at one chunk per second: the first goes at once, each other after one second.
    /// The channel before the paced stage stays within its capacity: memory is flat.
    @Test func aCopyTakesOneChunkPerCostAndBuffersNoMore() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out.bin")
            let clock = TestClock()
            let copy = Pipeline(
                from: ChunkList(Self.chunks), to: try await FileSink.create(at: destination), totalBytes: nil,
                options: .init(capacity: 4, rateLimit: RateLimiter(bytesPerSecond: Int64(Self.chunkSize), clock: clock)))
            let report = try await copy.run()
            #expect(try readFile(destination) == Self.data)
            #expect(clock.sleeps == Array(repeating: .seconds(1), count: 15))
            #expect(report.bytesRead == Int64(Self.data.count))
            #expect(report.peakBufferedBytes <= Int64(4 * Self.chunkSize))
        }
    }

    /// Progress counts a byte read when the paced stage lets it through, not when it enters
    /// the channel: the bar shows the limited rate from the start, while the channel is full.
    @Test func progressFollowsThePacedStageNotTheChannel() async throws {
        try await withScratchDirectory { directory in
            let copy = Pipeline(
                from: ChunkList(Self.chunks), to: try await FileSink.create(at: directory.appending("out.bin")),
                totalBytes: nil, options: .init(capacity: 4, rateLimit: RateLimiter(bytesPerSecond: Int64(Self.chunkSize), clock: TestClock())))
            let updates = copy.progress.subscribe()
            let seen = Task {
                var snapshots: [ProgressSnapshot] = []
                for await snapshot in updates { snapshots.append(snapshot) }
                return snapshots
            }
            _ = try await copy.run()
            let snapshots = await seen.value
            #expect(snapshots.last?.bytesCompleted == Int64(Self.data.count))
            #expect(snapshots.allSatisfy { $0.bytesCompleted - $0.bytesWritten <= Int64(Self.chunkSize) })
        }
    }

    /// With a transform, the limit applies to the bytes read from the source, before the
    /// transform: 1 MiB in 16 chunks at 256 KiB/s, however well it compresses.
    @Test func theLimitAppliesToTheSourceBytesOfACompression() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out.gz")
            let clock = TestClock()
            let copy = Pipeline(
                from: ChunkList(Self.chunks), to: try await FileSink.create(at: destination), totalBytes: nil,
                options: .init(capacity: 4, rateLimit: RateLimiter(bytesPerSecond: Int64(4 * Self.chunkSize), clock: clock)), transform: { try GzipEncoder() })
            let report = try await copy.run()
            #expect(clock.elapsed == .milliseconds(3750))
            #expect(report.bytesRead == Int64(Self.data.count))
            #expect(report.crc32 == CRC32(Self.data).value)
        }
    }

    /// A decompression is paced on the bytes it reads: the compressed ones.
    @Test func aDecompressionIsPacedOnTheCompressedBytes() async throws {
        let compressed = try await gzipped(Self.data)
        let chunks = stride(from: 0, to: compressed.count, by: Self.chunkSize).map {
            Chunk(compressed[$0..<min($0 + Self.chunkSize, compressed.count)])
        }
        try await withScratchDirectory { directory in
            let destination = directory.appending("out.bin")
            let clock = TestClock()
            let copy = Pipeline(
                from: ChunkList(chunks), to: try await FileSink.create(at: destination), totalBytes: nil,
                options: .init(capacity: 4, rateLimit: RateLimiter(bytesPerSecond: Int64(Self.chunkSize), clock: clock)), transform: { GzipDecoder() })
            let report = try await copy.run()
            #expect(try readFile(destination) == Self.data)
            #expect(report.bytesRead == Int64(compressed.count))
            // Every chunk but the first waits for its own bytes at one chunk per second.
            let expected = Duration.seconds(Double(compressed.count - Self.chunkSize) / Double(Self.chunkSize))
            #expect(abs((clock.elapsed - expected).sluiceSeconds) < 1e-6, "\(clock.elapsed) against \(expected)")
        }
    }

    /// Cancelling a copy while it waits for tokens ends it and commits nothing.
    @Test func cancellingDuringAWaitCommitsNothing() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out.bin")
            let clock = StoppedClock()
            let copy = Pipeline(
                from: ChunkList(Self.chunks), to: try await FileSink.create(at: destination), totalBytes: nil,
                options: .init(capacity: 4, rateLimit: RateLimiter(bytesPerSecond: 1, clock: clock)))
            let run = Task { [copy] in try await copy.run() }
            await clock.firstSleep()
            run.cancel()
            await #expect(throws: CancellationError.self) { try await run.value }
            #expect(!exists(destination))
            #expect(try temporaryFiles(in: directory.path) == [])
        }
    }
}
