import Testing
@testable import Sluice
import SluiceTestSupport

/// A ``Copier`` given no totals counts the files submitted: each joins the file total when
/// submitted and its size the byte total once it is opened, and ``ProgressSnapshot/fraction``
/// is `nil` until that total is final (``Copier/finish()`` called, every file opened), so a
/// fraction is a share of what is coming and never decreases (before: 0.999 from the first
/// MiB, the total taken to be what had been seen).
@Suite(.timeLimit(.minutes(2)))
struct CopierProgressTotalsTests {
    static let size = 4 << 20

    /// An engine with no totals whose files go through the pipeline in 64 KiB chunks at
    /// 16 MiB/s: a 4 MiB file takes about 0.25 s, so its progress has snapshots between.
    static func engine() -> Copier {
        var pipeline = PipelineOptions(capacity: 4)
        pipeline.rateLimit = RateLimiter(bytesPerSecond: 16 << 20)
        return Copier(options: .init(chunkSize: 64 << 10, copy: .init(forcesPipeline: true, pipeline: pipeline)))
    }

    /// Collects every snapshot the subscriber sees, to the last.
    static func collect(_ updates: AsyncStream<ProgressSnapshot>) -> Task<[ProgressSnapshot], Never> {
        Task {
            var seen: [ProgressSnapshot] = []
            for await snapshot in updates { seen.append(snapshot) }
            return seen
        }
    }

    @Test func theFractionIsTheShareOfTheFilesSubmittedOnceFinishWasCalled() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let source = directory.appending("in")
        try writeFile(source, [UInt8](repeating: 7, count: Self.size))
        let engine = Self.engine()
        let seen = Self.collect(engine.progress.subscribe())
        try await engine.submit(.init(source: source, destination: directory.appending("out")))
        let totals = await engine.finish()
        #expect(totals.committed == 1)
        let snapshots = await seen.value
        let last = try #require(snapshots.last)
        #expect(last.isFinal && last.fraction == 1.0 && last.totalBytes == Int64(Self.size))
        let between = snapshots.dropLast()
        // Each known fraction is the share of the one file's size, never of what was seen.
        for snapshot in between {
            #expect(snapshot.files?.total == 1)
            if let fraction = snapshot.fraction {
                #expect(snapshot.totalBytes == Int64(Self.size))
                #expect(fraction == min(0.999, Double(snapshot.bytesCompleted) / Double(Self.size)))
            }
        }
        let fractions = snapshots.compactMap(\.fraction)
        #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 <= $1 }, "never decreases: \(fractions)")
        #expect(between.contains { ($0.fraction ?? 1) < 0.9 }, "a fraction between: \(fractions)")
    }

    /// The hostile order: the file is copying and ``Copier/finish()`` not called yet, so more
    /// files may come: no fraction, though its bytes and its size are known.
    @Test func beforeFinishTheFractionIsUnknown() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let source = directory.appending("in")
        try writeFile(source, [UInt8](repeating: 7, count: Self.size))
        let engine = Self.engine()
        var updates = engine.progress.subscribe().makeAsyncIterator()
        try await engine.submit(.init(source: source, destination: directory.appending("out")))
        var copying: ProgressSnapshot?
        while let snapshot = await updates.next() {
            if snapshot.bytesCompleted > 0 {
                copying = snapshot
                break
            }
        }
        let snapshot = try #require(copying)
        #expect(snapshot.fraction == nil)
        #expect(snapshot.files?.total == 1)
        #expect(snapshot.files?.isTotalGrowing == true)
        let totals = await engine.finish()
        #expect(totals.progress?.fraction == 1.0)
    }

    /// A job whose source has no size (a sequence of chunks): no fraction before the last
    /// snapshot, even once finish was called.
    @Test func aSourceWithNoSizeLeavesTheFractionUnknownToTheEnd() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let chunks = (0..<64).map { _ in Chunk([UInt8](repeating: 1, count: 64 << 10)) }
        let engine = Self.engine()
        let seen = Self.collect(engine.progress.subscribe())
        try await engine.submit(.init(from: .chunks(ChunkList(chunks), name: "chunks"), to: .file(directory.appending("out"))))
        let totals = await engine.finish()
        #expect(totals.committed == 1)
        let snapshots = await seen.value
        #expect(snapshots.dropLast().allSatisfy { $0.fraction == nil })
        #expect(snapshots.last?.fraction == 1.0)
    }
}
