import Testing
@testable import Sluice
import SluiceTestSupport

/// Spilling to disk: large volumes in a serialized suite, each test in its own directory.
///
/// The limit is a guard against a hang, not a measure: 100,000 spilled chunks take about 8 s
/// alone, and over a minute on 2 processors shared with the whole parallel test run.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct PushBufferSpillTests {
    struct Boom: Error {}

    /// A 4 KiB chunk whose first, middle and last 8 bytes are `sequence` and the rest one byte
    /// derived from it.
    static func chunk(_ sequence: Int, size: Int = 4096) -> Chunk {
        Chunk(capacity: size) { buffer in
            // Filled at memory speed: a test makes 100,000 of them, and a loop per byte in a
            // debug build kept a core busy for most of a minute. The sequence number at the
            // start, the middle and the end, so a shifted or torn chunk shows.
            buffer.initializeMemory(as: UInt8.self, repeating: UInt8(truncatingIfNeeded: sequence &* 31 &+ 7))
            let stamp = UInt64(sequence).littleEndian
            for offset in Set([0, (size / 2 - 4) & ~7, size - 8]) where offset >= 0 && offset + 8 <= size {
                buffer.storeBytes(of: stamp, toByteOffset: offset, as: UInt64.self)
            }
            return size
        }
    }

    /// This process's open descriptors that point at a spill file in `directory`.
    static func openSpillFiles(in directory: ScratchDirectory) -> [String] {
        openDescriptors(under: directory.path).filter { $0.contains(".sluice-spill-") }
    }

    @Test func hundredThousandChunksThroughCapacityFourArriveCompleteAndInOrder() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let count = 100_000
        let buffer = PushBuffer<Chunk>(
            capacity: 4, byteBudget: nil, policy: .spill(directory: directory.path, limit: 1 << 31))
        // A spilling yield writes to the spill file: on a thread of its own.
        let (pushed, notSpilled) = try await onOwnThread { () -> (CRC32, Int?) in
            var pushed = CRC32()
            for sequence in 0..<count {
                let chunk = Self.chunk(sequence)
                chunk.withUnsafeBytes { pushed.update($0) }
                guard case let result = buffer.yield(chunk), sequence < 4 || result.isSpilled else { return (pushed, sequence) }
            }
            buffer.finish()
            return (pushed, nil)
        }
        if let notSpilled {
            Issue.record("chunk \(notSpilled) not spilled"); return
        }
        let names = try entries(in: directory.path)
        #expect(names.isEmpty, "the spill file is unlinked at creation")
        #expect(Self.openSpillFiles(in: directory).count == 1)

        var received = CRC32()
        var expected = 0
        for try await chunk in buffer {
            let sequence = chunk.withUnsafeBytes { Int(UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self))) }
            if sequence != expected {
                Issue.record("expected chunk \(expected), got \(sequence)"); return
            }
            expected += 1
            chunk.withUnsafeBytes { received.update($0) }
        }
        #expect(expected == count)
        #expect(received == pushed)
        #expect(buffer.statistics.elementsSpilled == count - 4)
        #expect(buffer.statistics.peakElementsBuffered <= 4)
        #expect(Self.openSpillFiles(in: directory).isEmpty, "the spill file is closed at the end")
    }

    enum Ending: String, CaseIterable, Sendable {
        case finish, failure, cancellation, droppedIterator
    }

    @Test(arguments: Ending.allCases)
    func spillFileIsGoneAfterTheStreamEnds(_ ending: Ending) async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let buffer = PushBuffer<Chunk>(
            capacity: 2, byteBudget: nil, policy: .spill(directory: directory.path, limit: 1 << 30))
        for sequence in 0..<20 { buffer.yield(Self.chunk(sequence)) }
        #expect(Self.openSpillFiles(in: directory).count == 1)
        switch ending {
        case .finish:
            buffer.finish()
            var delivered = 0
            for try await _ in buffer { delivered += 1 }
            #expect(delivered == 20)
        case .failure:
            buffer.fail(Boom())
            var delivered = 0
            await #expect(throws: Boom.self) { for try await _ in buffer { delivered += 1 } }
            #expect(delivered == 20)
        case .cancellation:
            let consumer = Task {
                var iterator = buffer.makeAsyncIterator()
                _ = try await iterator.next()
                _ = try await iterator.next()
                _ = try await iterator.next()  // the first spilled chunk, read back
                withUnsafeCurrentTask { $0?.cancel() }
                return try await iterator.next()
            }
            await #expect(throws: CancellationError.self) { try await consumer.value }
        case .droppedIterator:
            for try await _ in buffer { break }
        }
        let names = try entries(in: directory.path)
        #expect(names.isEmpty)
        #expect(Self.openSpillFiles(in: directory).isEmpty)
        guard case .terminated = buffer.yield(Self.chunk(99)) else { Issue.record("accepted after the end"); return }
    }

    @Test func passingTheSpillLimitFailsWithTheCapacityError() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        // Room for exactly three records of a header and 4096 bytes.
        let limit = 3 * (PushBuffer<Chunk>.Spill.recordOverhead + 4096)
        let buffer = PushBuffer<Chunk>(
            capacity: 2, byteBudget: nil, policy: .spill(directory: directory.path, limit: limit))
        let source = LockingSource()
        do {
            buffer.onCancel { source.stop() }
            var results: [PushBuffer<Chunk>.YieldResult] = []
            for sequence in 0..<6 { results.append(buffer.yield(Self.chunk(sequence), offset: Int64(sequence) * 4096)) }
            #expect(results.prefix(2).allSatisfy { if case .enqueued = $0 { true } else { false } })
            #expect(results[2...4].allSatisfy { $0.isSpilled })
            guard case .rejected(let back, offset: 20480) = results[5] else { Issue.record("not rejected: \(results[5])"); return }
            #expect(back == Self.chunk(5))
            var delivered: [Chunk] = []
            let error = try await #require(throws: CapacityExceededError.self) {
                for try await chunk in buffer { delivered.append(chunk) }
            }
            #expect(delivered == (0..<5).map { Self.chunk($0) })
            #expect(error.spillLimit == limit)
            #expect(error.bufferedCount == 5)
        }
        await source.stopped.wait()
        await buffer.stopsScheduledSoFarHaveRun()
        #expect(source.stops == 1)
        #expect(Self.openSpillFiles(in: directory).isEmpty)
    }

    @Test func spillDirectoryThatCannotBeWrittenFailsTheStreamWithTheFileError() async throws {
        let buffer = PushBuffer<Chunk>(
            capacity: 1, byteBudget: nil, policy: .spill(directory: "/nonexistent/sluice", limit: 1 << 20))
        buffer.yield(Self.chunk(0))
        guard case .rejected = buffer.yield(Self.chunk(1)) else { Issue.record("not rejected"); return }
        var delivered = 0
        let error = try await #require(throws: FileError.self) { for try await _ in buffer { delivered += 1 } }
        #expect(delivered == 1)
        #expect(error.code == .notFound)
    }

    static func spillPolicy(_ directory: ScratchDirectory) -> PushBuffer<Chunk>.OverflowPolicy {
        .spill(directory: directory.path, limit: 1 << 30)
    }

    /// C35: `PushBuffer<Chunk>(capacity: 16, byteBudget: 100, policy: .spill)`, four 60-byte
    /// chunks yielded (one in memory, three spilled), finish, two `next()`: after the second,
    /// nothing else is buffered in memory (60 + 60 > 100); the peak stays at 60 bytes.
    @Test func spillReadBackKeepsTheByteBudget() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let buffer = PushBuffer<Chunk>(capacity: 16, byteBudget: 100, policy: Self.spillPolicy(directory))
        let results = (0..<4).map { buffer.yield(Self.chunk($0, size: 60)) }
        guard case .enqueued = results[0] else { Issue.record("first chunk not in memory: \(results[0])"); return }
        #expect(results[1...].allSatisfy { $0.isSpilled })
        buffer.finish()
        var iterator = buffer.makeAsyncIterator()
        #expect(try await iterator.next() == Self.chunk(0, size: 60))
        #expect(try await iterator.next() == Self.chunk(1, size: 60))
        var statistics = buffer.statistics
        #expect(statistics.elementsBuffered == 0, "read back past the byte budget")
        #expect(statistics.elementsInSpill == 2)
        #expect(try await iterator.next() == Self.chunk(2, size: 60))
        #expect(try await iterator.next() == Self.chunk(3, size: 60))
        #expect(try await iterator.next() == nil)
        statistics = buffer.statistics
        #expect(statistics.peakElementsBuffered == 1 && statistics.peakBytesBuffered == 60)
    }

    /// Records read back are counted in the peaks: 90 bytes in memory, then 20 + 40 + 40 read
    /// back at once within the 100-byte budget.
    @Test func readBackCountsInThePeaks() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let buffer = PushBuffer<Chunk>(capacity: 4, byteBudget: 100, policy: Self.spillPolicy(directory))
        for (sequence, size) in [90, 20, 40, 40].enumerated() { buffer.yield(Self.chunk(sequence, size: size)) }
        #expect(buffer.statistics.elementsInSpill == 3)
        buffer.finish()
        var iterator = buffer.makeAsyncIterator()
        _ = try await iterator.next()
        _ = try await iterator.next()  // reads the three records back
        let statistics = buffer.statistics
        #expect(statistics.elementsBuffered == 2 && statistics.elementsInSpill == 0)
        #expect(statistics.peakElementsBuffered == 3 && statistics.peakBytesBuffered == 100)
    }

    /// C36: `PushBuffer(capacity: 2, highWatermark: 3, lowWatermark: 1, policy: .spill)`: the
    /// five yields answer keep-going, keep-going, then spilled with "pause" three times, and the
    /// resume callback runs once, when the drain crosses below 1: answers and resume agree.
    @Test func spilledYieldsReportPauseAndAgreeWithTheResumeCallback() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let buffer = PushBuffer<Chunk>(
            capacity: 2, byteBudget: nil, highWatermark: 3, lowWatermark: 1, policy: Self.spillPolicy(directory))
        let resumes = Counter()
        buffer.onResume { resumes.increment() }
        let answers = (0..<5).map { sequence -> String in
            switch buffer.yield(Self.chunk(sequence, size: 16)) {
            case .enqueued(let demand): "enqueued \(demand)"
            case .spilled(let demand): "spilled \(demand)"
            case .rejected: "rejected"
            case .terminated: "terminated"
            }
        }
        #expect(answers == ["enqueued keepGoing", "enqueued keepGoing", "spilled pause", "spilled pause", "spilled pause"])
        var iterator = buffer.makeAsyncIterator()
        for sequence in 0..<4 {
            #expect(try await iterator.next() == Self.chunk(sequence, size: 16))
            #expect(resumes.current == 0, "resumed while paused above the low watermark")
        }
        #expect(try await iterator.next() == Self.chunk(4, size: 16))
        #expect(resumes.current == 1)
        guard case .enqueued(.keepGoing) = buffer.yield(Self.chunk(5, size: 16)) else {
            Issue.record("the answer disagrees with the resume"); return
        }
    }
}

extension PushBuffer.YieldResult {
    var isSpilled: Bool {
        if case .spilled = self { true } else { false }
    }
}
