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

    /// An engine with no totals whose files go through the pipeline in 64 KiB chunks paced on
    /// `clock` (a ``HeldClock`` stops each copy after its first chunk until released).
    static func engine(pacedOn clock: HeldClock) -> Copier {
        var pipeline = PipelineOptions(capacity: 4)
        pipeline.rateLimit = RateLimiter(bytesPerSecond: 16 << 20, clock: clock)
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

    /// The hostile order, fixed: the file is copying (held after its first chunk) and
    /// ``Copier/finish()`` not called yet, so more files may come: no fraction, though its bytes
    /// and size are known. Then finish is called, the copy still held: the total is final, and
    /// the fraction is the share of that one file's size. Then the copy goes on to 1.0.
    @Test func theFractionIsUnknownBeforeFinishThenTheShareOfTheFilesSubmitted() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let source = directory.appending("in")
        try writeFile(source, [UInt8](repeating: 7, count: Self.size))
        let clock = HeldClock()
        let engine = Self.engine(pacedOn: clock)
        var updates = engine.progress.subscribe().makeAsyncIterator()
        try await engine.submit(.init(from: .file(source), to: .file(directory.appending("out"))))
        var copying: ProgressSnapshot?
        while let snapshot = await updates.next() {
            if snapshot.bytesCompleted > 0 {
                copying = snapshot
                break
            }
        }
        let held = try #require(copying)
        #expect(held.fraction == nil)
        #expect(held.files?.total == 1)
        #expect(held.files?.isTotalGrowing == true)
        let finishing = Task { await engine.finish() }
        var seen: [ProgressSnapshot] = []
        while let snapshot = await updates.next() {
            seen.append(snapshot)
            if snapshot.fraction != nil { break }
        }
        let known = try #require(seen.last)
        #expect(!known.isFinal && known.totalBytes == Int64(Self.size))
        #expect(known.fraction == Double(known.bytesCompleted) / Double(Self.size))
        #expect((known.fraction ?? 1) < 0.5)
        clock.release()
        while let snapshot = await updates.next() { seen.append(snapshot) }
        let totals = await finishing.value
        #expect(totals.committed == 1)
        let last = try #require(seen.last)
        #expect(last.isFinal && last.fraction == 1.0 && last.totalBytes == Int64(Self.size))
        // Each known fraction is the share of the one file's size, never of what was seen.
        for snapshot in seen.dropLast() {
            #expect(snapshot.files?.total == 1)
            if let fraction = snapshot.fraction {
                #expect(fraction == min(0.999, Double(snapshot.bytesCompleted) / Double(Self.size)))
            }
        }
        let fractions = seen.compactMap(\.fraction)
        #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 <= $1 }, "never decreases: \(fractions)")
    }

    /// A job whose source has no size (a sequence of chunks): no fraction before the last
    /// snapshot, even once finish was called.
    @Test func aSourceWithNoSizeLeavesTheFractionUnknownToTheEnd() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let chunks = (0..<64).map { _ in Chunk([UInt8](repeating: 1, count: 64 << 10)) }
        let clock = HeldClock()
        clock.release()
        let engine = Self.engine(pacedOn: clock)
        let seen = Self.collect(engine.progress.subscribe())
        try await engine.submit(.init(from: .chunks(ChunkList(chunks), name: "chunks"), to: .file(directory.appending("out"))))
        let totals = await engine.finish()
        #expect(totals.committed == 1)
        let snapshots = await seen.value
        #expect(snapshots.dropLast().allSatisfy { $0.fraction == nil })
        #expect(snapshots.last?.fraction == 1.0)
    }
}
