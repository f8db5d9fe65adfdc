@testable import SluiceBenchmarks
import Testing

@Suite struct ChunkSizeSweepTests {
    static let bytes: Int64 = 16 << 20

    static func run(
        _ design: BenchmarkDesign, _ chunkBytes: Int, seconds: Double, cpu: Double, outcome: BenchmarkOutcome = .ok
    ) -> BenchmarkRun {
        BenchmarkRun(
            design: design, consumer: .fast, bytesMoved: bytes, seconds: seconds, peakResidentBytes: 20 << 20,
            peakBufferedBytes: 0, outcome: outcome, samples: [], chunkBytes: chunkBytes, cpuSeconds: cpu)
    }

    static func dd(_ chunkBytes: Int, seconds: Double, cpu: Double) -> ReferenceRun {
        ReferenceRun(command: "dd", bytesMoved: bytes, seconds: seconds, chunkBytes: chunkBytes, cpuSeconds: cpu)
    }

    static let sweep = ChunkSizeSweep(
        runs: [
            run(.boundedPull, 1 << 20, seconds: 0.05, cpu: 0.05),
            run(.boundedPull, 4096, seconds: 0.5, cpu: 0.5),
            run(.boundedPull, 4096, seconds: 0.4, cpu: 0.4),
            run(.boundedPull, 4096, seconds: 0.45, cpu: 0.45),
            run(.boundedPull, 4096, seconds: 0.01, cpu: 0.01, outcome: .error("disk full")),
            run(.unboundedStream, 4096, seconds: 0.3, cpu: 0.2),
            run(.unboundedStream, 4096, seconds: 0.1, cpu: 0.4),
            run(.unboundedStream, 1 << 20, seconds: 0.06, cpu: 0.05),
        ],
        references: [
            dd(4096, seconds: 0.1, cpu: 0.02), dd(1 << 20, seconds: 0.025, cpu: 0.01),
            ReferenceRun(command: "cat", bytesMoved: bytes, seconds: 0.02, cpuSeconds: 0.01),
        ])

    @Test func pointsAreMediansBySizeThenLineAndFailedRunsAreLeftOut() throws {
        let sweep = Self.sweep
        #expect(sweep.chunkSizes == [4096, 1 << 20])
        #expect(sweep.lines == ["bounded-pull", "unbounded-stream", "dd"])
        #expect(sweep.points.map(\.line) == ["bounded-pull", "unbounded-stream", "dd", "bounded-pull", "unbounded-stream", "dd"])
        let bounded = try #require(sweep.point("bounded-pull", chunkBytes: 4096))
        #expect(bounded.seconds == 0.45 && bounded.cpuSeconds == 0.45)
        #expect(bounded.chunks == 4096)
        // Two runs: the mean of the two, for seconds and CPU seconds each.
        let unbounded = try #require(sweep.point("unbounded-stream", chunkBytes: 4096))
        #expect(abs(unbounded.seconds - 0.2) < 1e-12 && abs(unbounded.cpuSeconds - 0.3) < 1e-12)
        #expect(sweep.point("cat", chunkBytes: 4096) == nil)
        #expect(try #require(sweep.point("dd", chunkBytes: 1 << 20)).mebibytesPerSecond == 640)
    }

    @Test func speedIsComparedWithDdAtTheSameSize() throws {
        #expect(Self.sweep.speedRelativeToReference("dd", chunkBytes: 4096) == 1)
        #expect(try #require(Self.sweep.speedRelativeToReference("bounded-pull", chunkBytes: 4096)) == 0.1 / 0.45)
        #expect(Self.sweep.speedRelativeToReference("bounded-pull", chunkBytes: 8192) == nil)
    }

    /// (CPU at 4K − CPU at 1M) / (chunks at 4K − chunks at 1M): 4096 − 16 chunks more.
    @Test func cpuPerChunkIsTheDifferenceToTheLargestSizeOverTheExtraChunks() throws {
        let bounded = try #require(Self.sweep.cpuSecondsPerChunk("bounded-pull", chunkBytes: 4096))
        #expect(abs(bounded - 0.4 / 4080) < 1e-15)
        let dd = try #require(Self.sweep.cpuSecondsPerChunk("dd", chunkBytes: 4096))
        #expect(abs(dd - 0.01 / 4080) < 1e-15)
        #expect(Self.sweep.cpuSecondsPerChunk("dd", chunkBytes: 1 << 20) == nil)
        #expect(Self.sweep.cpuSecondsPerChunk("cat", chunkBytes: 4096) == nil)
    }

    @Test func chunksOfALastShortChunkAreCountedWhole() {
        let point = ChunkSizeSweep.Point(line: "dd", chunkBytes: 4096, bytesMoved: 4097, seconds: 1, cpuSeconds: 1)
        #expect(point.chunks == 2)
    }

    @Test func plotHasOneLinePerDesignAndDdWithThroughputAgainstChunkSize() {
        let series = Self.sweep.plotSeries(panel: "fast consumer")
        #expect(series.map(\.label) == ["bounded-pull", "unbounded-stream", "dd"])
        #expect(series.allSatisfy { $0.panel == "fast consumer" })
        let dd = series[2].points
        #expect(dd.map(\.0) == [4096, 1_048_576])
        #expect(dd.map(\.1) == [160, 640])
    }
}
