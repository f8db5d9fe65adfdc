#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CZlib
import Testing
@testable import Sluice
import SluiceTestSupport

@Suite(.timeLimit(.minutes(3)))
struct PipelineTests {
    struct Boom: Error {}

    /// A source of `count` generated chunks that counts how many were pulled and runs
    /// `onPull(index)` before handing chunk `index` out (it may throw, or cancel something).
    struct GeneratedChunks: AsyncSequence, Sendable {
        typealias Element = Chunk
        let count: Int
        let chunkSize: Int
        let pulled = Counter()
        var onPull: @Sendable (Int) throws -> Void = { _ in }

        static func bytes(ofChunk index: Int, size: Int) -> [UInt8] {
            [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: size)
        }

        func makeAsyncIterator() -> Iterator { Iterator(source: self) }

        struct Iterator: AsyncIteratorProtocol {
            let source: GeneratedChunks
            var index = 0

            mutating func next() async throws -> Chunk? {
                guard index < source.count else { return nil }
                defer { index += 1 }
                source.pulled.increment()
                try source.onPull(index)
                return Chunk(GeneratedChunks.bytes(ofChunk: index, size: source.chunkSize))
            }
        }
    }

    /// A source that reads a file through ``FileChunks`` and appends `growth` to the file after
    /// each of the first `appends` pulls: a file that grows while it is copied (C16).
    struct GrowingFile: AsyncSequence, Sendable {
        typealias Element = Chunk
        let chunks: FileChunks
        let path: Pathname
        let growth: [UInt8]
        let appends: Int

        func makeAsyncIterator() -> Iterator {
            Iterator(base: chunks.makeAsyncIterator(), source: self)
        }

        struct Iterator: AsyncIteratorProtocol {
            var base: FileChunks.AsyncIterator
            let source: GrowingFile
            var pulls = 0

            mutating func next() async throws -> Chunk? {
                let chunk = try await base.next()
                if pulls < source.appends { try appendToFile(source.path, source.growth) }
                pulls += 1
                return chunk
            }
        }
    }

    /// zlib's CRC-32 of `data`.
    static func zlibCRC32(_ data: [UInt8]) -> UInt32 {
        data.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
    }

    /// A task per subscriber that returns every snapshot it saw, once its stream ends.
    static func subscribe(_ hub: ProgressHub, count: Int) -> [Task<[ProgressSnapshot], Never>] {
        (0..<count).map { _ in
            let updates = hub.subscribe()
            return Task {
                var seen: [ProgressSnapshot] = []
                for await snapshot in updates { seen.append(snapshot) }
                return seen
            }
        }
    }

    static let failingWrites = SystemCalls(
        read: SystemCalls.live.read,
        write: { _, _, _ in .failure(.fileTooLarge) },
        fsync: SystemCalls.live.fsync)

    // MARK: Byte-identical copies

    static let sizes = [0, 1, 4095, 4096, 4097, 3 * 4096 + 7, 3 * 1024 * 1024 + 123]
    static let configurations: [(chunkSize: Int, capacity: Int)] = [4096, 1 << 20].flatMap { chunkSize in
        [1, 2, 8].map { (chunkSize, $0) }
    }

    @Test(arguments: sizes, configurations)
    func copyIsByteIdentical(size: Int, configuration: (chunkSize: Int, capacity: Int)) async throws {
        try await withScratchDirectory { directory in
            let sourcePath = directory.appending("source.bin")
            let destination = directory.appending("copy.bin")
            let data = randomBytes(count: size, seed: UInt64(size))
            try writeFile(sourcePath, data, permissions: 0o640)

            let source = try await FileChunks.open(sourcePath, chunkSize: configuration.chunkSize)
            let sink = try await FileSink.create(at: destination, source: source)
            let copy = Pipeline(
                from: source, to: sink, totalBytes: source.expectedSize,
                options: .init(capacity: configuration.capacity))
            let subscribers = Self.subscribe(copy.progress, count: 4)
            let report = try await copy.run()

            #expect(try readFile(destination) == data)
            #expect(try FileStatus.of(destination).permissions == 0o640)
            #expect(report.bytesRead == Int64(size))
            #expect(report.bytesWritten == Int64(size))
            #expect(report.crc32 == Self.zlibCRC32(data))
            #expect(report.crc32 == CRC32(data).value)
            #expect(try temporaryFiles(in: directory.path) == [])

            // C21: every subscriber ends, and its last snapshot is the final one.
            for subscriber in subscribers {
                let seen = await subscriber.value
                let last = try #require(seen.last)
                #expect(last.isFinal)
                #expect(last.fraction == 1.0)
                #expect(last.totalBytes == Int64(size))
                #expect(last.bytesCompleted == Int64(size))
                #expect(last.bytesWritten == Int64(size))
                #expect(seen.dropLast().allSatisfy { !$0.isFinal })
            }
        }
    }

    // MARK: Failures

    @Test func writerFailureIsReportedAndStopsTheReader() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out")
            try writeFile(destination, Array("OLD".utf8))
            let source = GeneratedChunks(count: 1000, chunkSize: 4096)
            let sink = try await FileSink.create(
                at: FileLocation(path: destination), source: nil, options: .init(replacesExisting: true), system: Self.failingWrites)
            let copy = Pipeline(from: source, to: sink, totalBytes: nil, options: .init(capacity: 2))
            let subscribers = Self.subscribe(copy.progress, count: 2)

            let error = try await #require(throws: FileError.self) { try await copy.run() }
            #expect(error.errno == .fileTooLarge)
            #expect(error.code == .noSpace)
            #expect(error.path == destination)
            #expect(try readFile(destination) == Array("OLD".utf8))
            #expect(try entries(in: directory.path) == ["out"])
            let pulled = source.pulled.current
            #expect(pulled <= 10, "the reader stopped: \(pulled) of 1000 chunks pulled")
            for subscriber in subscribers {
                let last = try #require(await subscriber.value.last)
                #expect(last.isFinal)
                #expect(last.fraction != 1.0)
            }
        }
    }

    @Test func writerFailureAfterSomeChunksIsReportedAsSuch() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out")
            let writes = Counter()
            let system = SystemCalls(
                read: SystemCalls.live.read,
                write: { descriptor, buffer, count in
                    writes.increment() > 5 ? .failure(.fileTooLarge) : SystemCalls.live.write(descriptor, buffer, count)
                },
                fsync: SystemCalls.live.fsync)
            let source = GeneratedChunks(count: 1000, chunkSize: 4096)
            let sink = try await FileSink.create(at: FileLocation(path: destination), source: nil, options: .init(), system: system)
            let copy = Pipeline(from: source, to: sink, totalBytes: nil, options: .init(capacity: 2))

            let error = try await #require(throws: (any Error).self) { try await copy.run() }
            let fileError = try #require(error as? FileError, "got \(type(of: error)): \(error)")
            #expect(fileError.errno == .fileTooLarge)
            #expect(!exists(destination))
            #expect(try entries(in: directory.path) == [])
            #expect(source.pulled.current <= 20, "\(source.pulled.current) of 1000 chunks pulled")
        }
    }

    @Test func sourceFailureIsReportedAndNothingCommitted() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out")
            var source = GeneratedChunks(count: 100, chunkSize: 4096)
            source.onPull = { index in if index == 5 { throw Boom() } }
            let sink = try await FileSink.create(at: destination)
            let copy = Pipeline(from: source, to: sink, totalBytes: nil, options: .init(capacity: 2))

            await #expect(throws: Boom.self) { try await copy.run() }
            #expect(!exists(destination))
            #expect(try entries(in: directory.path) == [])
        }
    }

    @Test func sourceFailureKeepsAnOldDestination() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out")
            try writeFile(destination, Array("OLD".utf8))
            var source = GeneratedChunks(count: 100, chunkSize: 4096)
            source.onPull = { index in if index == 50 { throw Boom() } }
            let sink = try await FileSink.create(at: destination, options: .init(replacesExisting: true))
            let copy = Pipeline(from: source, to: sink, totalBytes: nil, options: .init(capacity: 8))

            await #expect(throws: Boom.self) { try await copy.run() }
            #expect(try readFile(destination) == Array("OLD".utf8))
            #expect(try entries(in: directory.path) == ["out"])
        }
    }

    // MARK: Cancellation

    /// A seed from the clock, printed with every failure so that a run can be repeated.
    static func freshSeed() -> UInt64 {
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }

    @Test(arguments: 0..<4)
    func cancellingTheRunningTaskAtARandomChunkCommitsNothing(round: Int) async throws {
        let seed = Self.freshSeed()
        var generator = SplitMix64(seed: seed)
        let cancelAt = Int(generator.next() % 64)
        try await withScratchDirectory { directory in
            let destination = directory.appending("out")
            let cancelRun = LockedValue<(@Sendable () -> Void)?>(nil)
            var source = GeneratedChunks(count: 200, chunkSize: 4096)
            source.onPull = { index in
                if index == cancelAt { cancelRun.withLock { $0 }?() }
            }
            let sink = try await FileSink.create(at: destination)
            let copy = Pipeline(from: source, to: sink, totalBytes: nil, options: .init(capacity: 2))

            let armed = Latch()
            let task = Task {
                await armed.wait()
                return try await copy.run()
            }
            cancelRun.withLock { $0 = { task.cancel() } }
            armed.open()

            let result = await task.result
            #expect(throws: CancellationError.self, "seed \(seed), cancelled at chunk \(cancelAt)") {
                try result.get()
            }
            #expect(!exists(destination), "seed \(seed)")
            #expect(try entries(in: directory.path) == [], "seed \(seed)")
        }
    }

    @Test(arguments: 0..<4)
    func cancellingTheReadingStageFromTheSourceCommitsNothing(round: Int) async throws {
        let seed = Self.freshSeed()
        var generator = SplitMix64(seed: seed)
        let cancelAt = Int(generator.next() % 64)
        try await withScratchDirectory { directory in
            let destination = directory.appending("out")
            var source = GeneratedChunks(count: 200, chunkSize: 4096)
            source.onPull = { index in
                if index == cancelAt { withUnsafeCurrentTask { $0?.cancel() } }
                try Task.checkCancellation()
            }
            let sink = try await FileSink.create(at: destination)
            let copy = Pipeline(from: source, to: sink, totalBytes: nil, options: .init(capacity: 1))

            let error = try await #require(throws: (any Error).self) { try await copy.run() }
            #expect(error is CancellationError, "got \(type(of: error)): \(error); seed \(seed), chunk \(cancelAt)")
            #expect(!exists(destination), "seed \(seed)")
            #expect(try entries(in: directory.path) == [], "seed \(seed)")
        }
    }

    @Test func errorsCausedByStoppingAreNotThePrimaryError() {
        typealias Copy = Pipeline<GeneratedChunks, FileSink>
        let refused = BoundedChannel<Chunk>.SendError(reason: .cancelled, element: Chunk([1]))
        let gone = BoundedChannel<Chunk>.SendError(reason: .consumerTerminated, element: Chunk([1]))
        let full = FileError.write(path: "out", errno: .fileTooLarge)

        #expect(Copy.primaryError([]) == nil)
        #expect((Copy.primaryError([CancellationError(), gone, full]) as? FileError)?.errno == .fileTooLarge)
        #expect((Copy.primaryError([refused, full]) as? FileError)?.errno == .fileTooLarge)
        #expect(Copy.primaryError([gone, CancellationError()]) is CancellationError)
        // A refused send is the trace of a cancellation: it never leaks out of run().
        #expect(Copy.primaryError([refused, refused]) is CancellationError)
    }

    // MARK: Sources that change (C16)

    @Test func fileThatGrowsDuringTheCopyIsCopiedToTheEnd() async throws {
        try await withScratchDirectory { directory in
            let sourcePath = directory.appending("growing.log")
            let destination = directory.appending("copy.log")
            let initial = randomBytes(count: 2 * 4096 + 100, seed: 16)
            try writeFile(sourcePath, initial)
            let growth = randomBytes(count: 3000, seed: 17)

            let chunks = try await FileChunks.open(sourcePath, chunkSize: 4096)
            let source = GrowingFile(chunks: chunks, path: sourcePath, growth: growth, appends: 3)
            let sink = try await FileSink.create(at: destination, source: chunks)
            let copy = Pipeline(from: source, to: sink, totalBytes: chunks.expectedSize, options: .init(capacity: 1))
            let subscribers = Self.subscribe(copy.progress, count: 1)
            let report = try await copy.run()

            let output = try readFile(destination)
            let final = try readFile(sourcePath)
            #expect(final.count > initial.count)
            #expect(final.starts(with: output), "the output is a prefix of the final file")
            #expect(report.bytesRead == Int64(output.count))
            #expect(report.bytesWritten == Int64(output.count))
            #expect(output.count > initial.count, "not stopped at the first size")
            #expect(report.crc32 == Self.zlibCRC32(output))

            let seen = await subscribers[0].value
            #expect(seen.allSatisfy { ($0.fraction ?? 0) <= 1 })
            let fractions = seen.compactMap(\.fraction)
            #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 <= $1 }, "never decreases: \(fractions)")
            let last = try #require(seen.last)
            #expect(last.fraction == 1.0)
            #expect(last.totalBytes == Int64(output.count))
        }
    }
}
