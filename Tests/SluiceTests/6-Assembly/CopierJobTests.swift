#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Sluice
import SluiceTestSupport
import Testing

/// One job value: a ``Copier/Job`` from a file, a descriptor or any chunk sequence, to a file
/// or any ``ChunkSink``, through the copier's one engine.
@Suite(.timeLimit(.minutes(3)))
struct CopierJobTests {
    /// A sink that keeps what it is given in memory and says how it ended.
    actor MemorySink: ChunkSink {
        enum Ending: Equatable { case open, committed, aborted }
        private(set) var bytes: [UInt8] = []
        private(set) var ending = Ending.open

        func write(_ chunk: Chunk) async throws { chunk.withUnsafeBytes { bytes += $0 } }
        func commit() async throws { ending = .committed }
        func abort() async { ending = .aborted }
    }

    /// Chunks that fail after their first, as a socket that drops.
    struct FailingChunks: AsyncSequence, Sendable {
        struct Dropped: Error {}
        func makeAsyncIterator() -> Iterator { Iterator() }
        struct Iterator: AsyncIteratorProtocol {
            var sent = false
            mutating func next() async throws(Dropped) -> Chunk? {
                guard !sent else { throw Dropped() }
                sent = true
                return Chunk(Array(repeating: 1, count: 1000))
            }
        }
    }

    static let data = CopierTests.content(3, size: 200_000)

    static func chunks(of data: [UInt8], size: Int = 64 << 10) -> ChunkList {
        ChunkList(stride(from: 0, to: data.count, by: size).map { Chunk(Array(data[$0..<min($0 + size, data.count)])) })
    }

    @Test func aChunkSequenceBecomesAFileCommittedAndVerifiedAsTheCopiersOtherFiles() async throws {
        try await withScratchDirectory { scratch in
            let copier = Copier(options: .init(copy: .init(pipeline: .init(verifiesOutput: true))))
            let destination = scratch.appending("out")
            let committed = try await copier.copy(.init(from: .chunks(Self.chunks(of: Self.data), name: "memory"), to: .file(destination)))
            let totals = await copier.finish()
            #expect(try readFile(destination) == Self.data)
            #expect(committed.report.method == .pipeline)
            #expect(committed.report.bytesWritten == Int64(Self.data.count))
            #expect(committed.report.verification == .verified)
            #expect(totals.committed == 1 && totals.unsyncedDirectories.isEmpty)
            #expect(try entries(in: scratch.path) == ["out"])
        }
    }

    @Test func aDescriptorGoesThroughATransformIntoAnySink() async throws {
        var ends: [CInt] = [0, 0]
        try #require(pipe(&ends) == 0)
        let (reading, writing) = (Descriptor(rawValue: ends[0]), Descriptor(rawValue: ends[1]))
        defer { close(reading.rawValue) }
        // Written and closed before the job starts (less than a pipe holds): the reader meets
        // the whole input, then its end.
        let input = Array(Self.data[0..<50_000])
        let written = input.withUnsafeBytes { write(writing.rawValue, $0.baseAddress, $0.count) }
        close(writing.rawValue)
        try #require(written == input.count)
        let sink = MemorySink()
        let copier = Copier()
        let outcomes = CopierTests.Outcomes()
        let committed = try await copier.copy(.init(
            from: .descriptor(reading, name: "pipe"), to: .sink(sink, name: "memory"),
            transform: { ParallelGzipEncoder(threadCount: 1) }, completion: outcomes.add))
        _ = await copier.finish()
        #expect(await sink.ending == .committed)
        let decoded = try await drive(GzipDecoder(), await sink.bytes, chunkSize: 4096)
        #expect(decoded.output == input)
        #expect(committed.report.bytesRead == Int64(input.count))
        #expect(outcomes.all.map(\.source) == ["pipe"])
        #expect(outcomes.all.map(\.destination) == ["memory"])
    }

    @Test func aFileGoesIntoAnySinkByThePipeline() async throws {
        try await withScratchDirectory { scratch in
            try writeFile(scratch.appending("in"), Self.data)
            let sink = MemorySink()
            let copier = Copier()
            let committed = try await copier.copy(.init(from: .file(scratch.appending("in")), to: .sink(sink, name: "memory")))
            _ = await copier.finish()
            #expect(await sink.bytes == Self.data)
            #expect(await sink.ending == .committed)
            #expect(committed.report.method == .pipeline)
            #expect(committed.report.crc32 != nil)
        }
    }

    /// A source that fails leaves nothing: the file destination is never created, a sink is
    /// aborted; the copier goes on with its other jobs.
    @Test func aFailingSourceLeavesNothingAndTheCopierGoesOn() async throws {
        try await withScratchDirectory { scratch in
            let copier = Copier()
            await #expect(throws: FailingChunks.Dropped.self) {
                _ = try await copier.copy(.init(from: .chunks(FailingChunks(), name: "socket"), to: .file(scratch.appending("out"))))
            }
            let sink = MemorySink()
            await #expect(throws: FailingChunks.Dropped.self) {
                _ = try await copier.copy(.init(from: .chunks(FailingChunks(), name: "socket"), to: .sink(sink, name: "memory")))
            }
            #expect(await sink.ending == .aborted)
            let committed = try await copier.copy(.init(from: .chunks(Self.chunks(of: [1, 2, 3]), name: "next"), to: .file(scratch.appending("next"))))
            let totals = await copier.finish()
            #expect(committed.report.bytesWritten == 3)
            #expect(totals.committed == 1 && totals.failed == 2)
            #expect(try entries(in: scratch.path) == ["next"])
        }
    }

    /// A sink is aborted when its job fails before the pipeline runs (the source cannot be
    /// opened) and when its job never starts (the copier cancelled while it waited for the
    /// only slot, behind a job reading a pipe that never ends).
    @Test func aSinkIsAbortedWhenItsJobFailsBeforeTheCopyOrNeverStarts() async throws {
        try await withScratchDirectory { scratch in
            let copier = Copier(options: .init(width: 1))
            let unopened = MemorySink()
            await #expect(throws: FileError.self) {
                _ = try await copier.copy(.init(from: .file(scratch.appending("missing")), to: .sink(unopened, name: "memory")))
            }
            #expect(await unopened.ending == .aborted)

            var ends: [CInt] = [0, 0]
            try #require(pipe(&ends) == 0)
            defer { close(ends[0]); close(ends[1]) }
            let (first, waiting) = (MemorySink(), MemorySink())
            let outcomes = CopierTests.Outcomes()
            try await copier.submit(.init(
                from: .descriptor(Descriptor(rawValue: ends[0]), name: "pipe"), to: .sink(first, name: "first"),
                completion: outcomes.add))
            try await copier.submit(.init(
                from: .chunks(Self.chunks(of: [1, 2, 3]), name: "list"), to: .sink(waiting, name: "second"),
                completion: outcomes.add))
            copier.cancel()
            let totals = await copier.finish()
            #expect(totals.failed == 3 && totals.committed == 0)
            #expect(await first.ending == .aborted)
            #expect(await waiting.ending == .aborted)
            #expect(outcomes.all.allSatisfy { if case .failure = $0.result { true } else { false } })
        }
    }

    /// Chunks that, after their first, wait until the copier's progress counts them, then fail.
    struct FailingAfterCounted: AsyncSequence, Sendable {
        let progress: ProgressHub
        func makeAsyncIterator() -> Iterator { Iterator(progress: progress) }
        struct Iterator: AsyncIteratorProtocol {
            let progress: ProgressHub
            var sent = false
            mutating func next() async throws -> Chunk? {
                guard !sent else {
                    while (progress.latest?.bytesCompleted ?? 0) == 0 { await Task.yield() }
                    throw FailingChunks.Dropped()
                }
                sent = true
                return Chunk(Array(repeating: 2, count: 512 << 10))
            }
        }
    }

    /// A source of unknown size that fails keeps the bytes it was counted for: the operation's
    /// progress never goes back (it used to drop to 0).
    @Test func progressNeverGoesBackWhenASourceOfUnknownSizeFails() async throws {
        let copier = Copier()
        let snapshots = Task {
            var seen: [Int64] = []
            for await snapshot in copier.progress.subscribe() { seen.append(snapshot.bytesCompleted) }
            return seen
        }
        await #expect(throws: FailingChunks.Dropped.self) {
            _ = try await copier.copy(.init(
                from: .chunks(FailingAfterCounted(progress: copier.progress), name: "socket"), to: .sink(MemorySink(), name: "memory")))
        }
        _ = await copier.finish()
        let seen = await snapshots.value
        #expect(seen.contains(512 << 10), "\(seen)")
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 <= $1 }, "\(seen)")
    }

    /// A transform that reserves a gzip index gets its index patched into a file destination
    /// whatever the job reads: a descriptor or a chunk sequence gives the same indexed member as
    /// a file does (the index used to be left reserved, unfilled, when the file sink was reached
    /// through the type-erased sink of a job that is not file to file).
    @Test func anIndexReservedByTheTransformIsPatchedWhateverTheSource() async throws {
        try await withScratchDirectory { scratch in
            let input = CopierTests.content(5, size: 5 << 20)
            try writeFile(scratch.appending("in"), input)
            let transform: TransformFactory = {
                ParallelGzipEncoder(
                    level: .default, threadCount: 2, blockSize: 256 << 10, outputChunkSize: 64 << 10, maximumBlocksInFlight: nil,
                    indexing: .accessPoints(inputSize: Int64(input.count), reservesIndex: true))
            }
            let opened = try Descriptor.open(scratch.appending("in"), O_RDONLY)
            defer { close(opened.rawValue) }
            let copier = Copier()
            _ = try await copier.copy(.init(from: .file(scratch.appending("in")), to: .file(scratch.appending("file.gz")), transform: transform))
            _ = try await copier.copy(.init(
                from: .descriptor(opened, name: "descriptor"), to: .file(scratch.appending("descriptor.gz")),
                transform: transform))
            _ = try await copier.copy(.init(
                from: .chunks(Self.chunks(of: input), name: "list"), to: .file(scratch.appending("chunks.gz")), transform: transform))
            _ = await copier.finish()
            let expected = try readFile(scratch.appending("file.gz"))
            #expect(GzipIndexTests.index(of: expected).index != nil)
            #expect(try await drive(GzipDecoder(), expected, chunkSize: 1 << 20).output == input)
            for name: Pathname in ["descriptor.gz", "chunks.gz"] {
                let member = try readFile(scratch.appending(name))
                #expect(GzipIndexTests.index(of: member).index != nil, "\(name)")
                let isSame = member == expected
                #expect(isSame, "\(name)")
            }
        }
    }

    /// A job's public names are where a file job reads and writes: setting them after the
    /// initializer retargets the job (they used to be names only, the job copying the first paths).
    @Test func settingAFileJobsPathsRetargetsIt() async throws {
        try await withScratchDirectory { scratch in
            try writeFile(scratch.appending("a"), [1, 2, 3])
            try writeFile(scratch.appending("b"), [4, 5])
            var job = Copier.Job(from: .file(scratch.appending("a")), to: .file(scratch.appending("x")))
            job.source = scratch.appending("b")
            job.destination = scratch.appending("y")
            let copier = Copier()
            _ = try await copier.copy(job)
            _ = await copier.finish()
            #expect(try readFile(scratch.appending("y")) == [4, 5])
            #expect(try entries(in: scratch.path) == ["a", "b", "y"])
        }
    }
}
