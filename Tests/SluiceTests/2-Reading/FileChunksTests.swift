#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Sluice
import SluiceTestSupport

@Suite(.timeLimit(.minutes(3)))
struct FileChunksTests {
    static let chunkSize = 4096

    /// Every chunk of `chunks`, in order.
    static func collect(_ chunks: FileChunks) async throws -> [Chunk] {
        var result: [Chunk] = []
        for try await chunk in chunks { result.append(chunk) }
        return result
    }

    /// The file offset (`pos` in /proc/self/fdinfo) of this process's descriptor open on the
    /// file with `status`'s identity, or `nil` if none is open.
    static func offsetOfOpenDescriptor(on status: FileStatus) throws -> Int64? {
        for name in try entries(in: "/proc/self/fd") {
            guard let number = CInt(name.description) else { continue }
            guard let open = try? Descriptor(rawValue: number).status(),
                open.isSameFile(as: status)
            else { continue }
            let info = try readFile(Pathname("/proc/self/fdinfo/\(number)"))
            let line = String(decoding: info, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("pos:") }
            return line.flatMap { Int64($0.dropFirst(4).trimmingPrefix(while: \.isWhitespace)) }
        }
        return nil
    }

    // MARK: Contents

    @Test(arguments: [0, 1, chunkSize - 1, chunkSize, chunkSize + 1, 3 * chunkSize + 7])
    func chunksConcatenateToTheFile(size: Int) async throws {
        try await withScratchDirectory { directory in
            let path = directory.appending("input.bin")
            let data = randomBytes(count: size, seed: UInt64(size))
            try writeFile(path, data)

            let chunks = try await FileChunks.open(path, chunkSize: Self.chunkSize)
            #expect(chunks.chunkSize == Self.chunkSize)
            #expect(chunks.expectedSize == (size == 0 ? nil : Int64(size)))
            let collected = try await Self.collect(chunks)

            #expect(collected.flatMap(\.bytes) == data)
            #expect(collected.count == (size + Self.chunkSize - 1) / Self.chunkSize)
            #expect(collected.dropLast().allSatisfy { $0.count == Self.chunkSize }, "every chunk but the last is full")
            #expect(collected.allSatisfy { !$0.isEmpty }, "no empty chunk")
        }
    }

    @Test func defaultChunkSizeIsOneMebibyte() async throws {
        try await withScratchDirectory { directory in
            let path = directory.appending("input.bin")
            let size = 3 * FileChunks.defaultChunkSize + 5
            let data = randomBytes(count: size, seed: 42)
            try writeFile(path, data)

            let collected = try await Self.collect(try await FileChunks.open(path))
            #expect(collected.map(\.count) == [1 << 20, 1 << 20, 1 << 20, 5])
            #expect(collected.flatMap(\.bytes) == data)
        }
    }

    @Test func nextAfterTheEndKeepsReturningNil() async throws {
        try await withScratchDirectory { directory in
            let path = directory.appending("input.bin")
            try writeFile(path, [1, 2, 3])
            var iterator = try await FileChunks.open(path, chunkSize: Self.chunkSize).makeAsyncIterator()
            #expect(try await iterator.next()?.bytes == [1, 2, 3])
            #expect(try await iterator.next() == nil)
            #expect(try await iterator.next() == nil)
        }
    }

    // MARK: No read without demand

    @Test func openedFileIsReadOnlyOnDemand() async throws {
        try await withScratchDirectory { directory in
            let path = directory.appending("input.bin")
            try writeFile(path, randomBytes(count: 5 * Self.chunkSize, seed: 5))
            let status = try FileStatus.of(path)

            let chunks = try await FileChunks.open(path, chunkSize: Self.chunkSize)
            #expect(try Self.offsetOfOpenDescriptor(on: status) == 0, "opening reads nothing")
            var iterator = chunks.makeAsyncIterator()
            #expect(try await iterator.next()?.count == Self.chunkSize)
            #expect(try Self.offsetOfOpenDescriptor(on: status) == Int64(Self.chunkSize), "one chunk, no read-ahead")
            #expect(try await iterator.next()?.count == Self.chunkSize)
            #expect(try Self.offsetOfOpenDescriptor(on: status) == Int64(2 * Self.chunkSize))
        }
    }

    @Test func givenDescriptorMovesOneChunkPerNext() async throws {
        try await withScratchDirectory { directory in
            let path = directory.appending("input.bin")
            let data = randomBytes(count: 3 * Self.chunkSize + 7, seed: 6)
            try writeFile(path, data)
            let descriptor = try Descriptor.open(path, O_RDONLY)
            defer { try? descriptor.close() }

            let chunks = try await FileChunks.reading(descriptor, path: path, chunkSize: Self.chunkSize)
            #expect(lseek(descriptor.rawValue, 0, SEEK_CUR) == 0)
            var expectedOffset = 0
            var collected: [UInt8] = []
            for try await chunk in chunks {
                expectedOffset += chunk.count
                collected += chunk.bytes
                #expect(lseek(descriptor.rawValue, 0, SEEK_CUR) == off_t(expectedOffset))
            }
            #expect(collected == data)
            #expect(fcntl(descriptor.rawValue, F_GETFD) >= 0, "a given descriptor is not closed")
        }
    }

    @Test func pipeKeepsTheRestWaitingAfterOneNext() async throws {
        let ends = try makePipe()
        defer { try? ends.read.close() }
        let data = randomBytes(count: 3 * Self.chunkSize, seed: 7)
        try data.withUnsafeBytes { try ends.write.write(contentsOf: $0) }

        let chunks = try await FileChunks.reading(ends.read, chunkSize: Self.chunkSize)
        #expect(chunks.expectedSize == nil)
        var iterator = chunks.makeAsyncIterator()
        let first = try #require(try await iterator.next())
        #expect(first.bytes == Array(data[..<Self.chunkSize]))

        try ends.write.close()
        let rest = try readAll(ends.read)
        #expect(rest == Array(data[Self.chunkSize...]), "the other two chunks stayed in the pipe")
    }

    @Test func pipeDeliversWhatTheWriterSentThenEnds() async throws {
        let ends = try makePipe()
        defer { try? ends.read.close() }
        try Array("hello ".utf8).withUnsafeBytes { try ends.write.write(contentsOf: $0) }
        let chunks = try await FileChunks.reading(ends.read, chunkSize: Self.chunkSize)
        var iterator = chunks.makeAsyncIterator()
        // A pipe's chunk is what one read delivered: no waiting to fill the chunk.
        #expect(try await iterator.next()?.bytes == Array("hello ".utf8))
        try Array("world\n".utf8).withUnsafeBytes { try ends.write.write(contentsOf: $0) }
        try ends.write.close()
        #expect(try await iterator.next()?.bytes == Array("world\n".utf8))
        #expect(try await iterator.next() == nil)
    }

    // MARK: Files that lie about their size (C13)

    @Test func procFileWithSizeZeroHasContent() async throws {
        let path: Pathname = "/proc/version"
        #expect(try FileStatus.of(path).size == 0)
        let chunks = try await FileChunks.open(path, chunkSize: Self.chunkSize)
        #expect(chunks.expectedSize == nil)
        let collected = try await Self.collect(chunks).flatMap(\.bytes)
        #expect(!collected.isEmpty)
        #expect(collected == (try readFile(path)))
    }

    @Test(.enabled(if: exists("/sys/class/net/lo/address"), "this machine has no /sys/class/net/lo"))
    func sysFileIsExactlyItsContent() async throws {
        let path: Pathname = "/sys/class/net/lo/address"
        let collected = try await Self.collect(try await FileChunks.open(path, chunkSize: Self.chunkSize)).flatMap(\.bytes)
        #expect(collected.count == 18)
        #expect(collected == Array("00:00:00:00:00:00\n".utf8))
    }

    // MARK: Errors

    @Test func directoryIsRefused() async throws {
        try await withScratchDirectory { directory in
            let error = try await #require(throws: FileError.self) {
                try await FileChunks.open(directory.path)
            }
            #expect(error.code == .isDirectory)
            #expect(error.path == directory.path)
        }
    }

    @Test func missingFileIsNotFound() async throws {
        try await withScratchDirectory { directory in
            let path = directory.appending("missing")
            let error = try await #require(throws: FileError.self) {
                try await FileChunks.open(path)
            }
            #expect(error.code == .notFound)
            #expect(error.operation == .open)
            #expect(error.path == path)
        }
    }

    @Test(arguments: [1, 100, 5000])
    func interruptedAndShortReadsStillFillEveryChunk(maximumCount: Int) async throws {
        try await withScratchDirectory { directory in
            let seed: UInt64 = 0xC0FF_EE00 &+ UInt64(maximumCount)
            let size = 3 * Self.chunkSize + 7
            let data = randomBytes(count: size, seed: seed)
            let path = directory.appending("input.bin")
            try writeFile(path, data)

            // Every other read is interrupted, the others deliver 1...maximumCount bytes.
            let state = LockedValue((interruptNext: true, generator: SplitMix64(seed: seed)))
            let system = SystemCalls(
                read: { descriptor, buffer, count in
                    let length = state.withLock { state -> Int? in
                        defer { state.interruptNext.toggle() }
                        if state.interruptNext { return nil }
                        return min(count, 1 + Int(state.generator.next() % UInt64(maximumCount)))
                    }
                    guard let length else { return .failure(.interrupted) }
                    return SystemCalls.live.read(descriptor, buffer, length)
                },
                write: SystemCalls.live.write, fsync: SystemCalls.live.fsync)

            let chunks = try await FileChunks.open(
                path, descriptor: nil, ownsDescriptor: true, chunkSize: Self.chunkSize, system: system)
            let collected = try await Self.collect(chunks)
            #expect(collected.map(\.count) == [Self.chunkSize, Self.chunkSize, Self.chunkSize, 7], "seed \(seed)")
            #expect(collected.flatMap(\.bytes) == data, "seed \(seed)")
        }
    }

    @Test func readErrorIsAFileErrorWithPathAndErrno() async throws {
        try await withScratchDirectory { directory in
            let path = directory.appending("input.bin")
            try writeFile(path, [1, 2, 3])
            let system = SystemCalls(
                read: { _, _, _ in .failure(.ioError) }, write: SystemCalls.live.write, fsync: SystemCalls.live.fsync)
            let chunks = try await FileChunks.open(
                path, descriptor: nil, ownsDescriptor: true, chunkSize: Self.chunkSize, system: system)
            var iterator = chunks.makeAsyncIterator()
            let error = try await #require(throws: FileError.self) { try await iterator.next() }
            #expect(error.code == .io)
            #expect(error.operation == .read)
            #expect(error.errno == .ioError)
            #expect(error.path == path)
        }
    }

    // MARK: Cancellation

    @Test func cancelledBeforeTheFirstNextThrowsCancellation() async throws {
        let ends = try makePipe()
        defer {
            try? ends.read.close()
            try? ends.write.close()
        }
        let chunks = try await FileChunks.reading(ends.read, chunkSize: Self.chunkSize)
        let task = Task { () async throws -> Int in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await Self.collect(chunks).count
        }
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func cancellingARunningIterationOnAnIdlePipeEndsIt() async throws {
        let ends = try makePipe()
        defer {
            try? ends.read.close()
            try? ends.write.close()
        }
        let chunks = try await FileChunks.reading(ends.read, chunkSize: Self.chunkSize)
        let task = Task { try await Self.collect(chunks).count }
        // Cancelled before it starts, or while the read waits in poll(2): both end the same way.
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func cancellingAfterDataArrivedEndsTheWaitForMore() async throws {
        let ends = try makePipe()
        defer {
            try? ends.read.close()
            try? ends.write.close()
        }
        let chunks = try await FileChunks.reading(ends.read, chunkSize: Self.chunkSize)
        let firstChunk = Latch()
        let task = Task { () async throws -> Int in
            var count = 0
            for try await chunk in chunks {
                count += chunk.count
                firstChunk.open()
            }
            return count
        }
        try [UInt8](repeating: 9, count: 10).withUnsafeBytes { try ends.write.write(contentsOf: $0) }
        await firstChunk.wait()
        // The task is now about to call next() again, or waits in poll(2) on the idle pipe.
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func openingAFIFOWithoutAWriterReturnsAndTheReadEndsOnCancellation() async throws {
        try await withScratchDirectory { directory in
            let fifo = directory.appending("fifo")
            #expect(fifo.withCString { mkfifo($0, 0o600) } == 0)
            // The open does not wait for a writer in open(2), where nothing could interrupt it;
            // the wait is in next(), which cancellation ends.
            let chunks = try await FileChunks.open(fifo)
            #expect(chunks.status.kind == .fifo)
            let task = Task {
                var iterator = chunks.makeAsyncIterator()
                return try await iterator.next()
            }
            task.cancel()
            await #expect(throws: CancellationError.self) { _ = try await task.value }
        }
    }

    // MARK: A cancelled read leaves the wake signal to the read it was meant for (C34)

    /// C34: a task waits in `next()` on a FIFO and is cancelled; the writer then writes `hello`;
    /// a new, uncancelled task's `next()` returns `hello` (the wake signal was consumed by the
    /// read it was meant for).
    @Test func cancelledReadDoesNotPoisonTheNextRead() async throws {
        try await withScratchDirectory { directory in
            let fifo = directory.appending("fifo")
            #expect(fifo.withCString { mkfifo($0, 0o600) } == 0)
            let chunks = try await FileChunks.open(fifo)
            let writer = try Descriptor.open(fifo, O_WRONLY)
            defer { try? writer.close() }
            let waiting = Latch()
            chunks.reader.willWait.withLock { $0 = { waiting.open() } }
            let first = Task {
                var iterator = chunks.makeAsyncIterator()
                return try await iterator.next()
            }
            await waiting.wait()  // the read is inside its cancellation handler, about to poll
            first.cancel()
            await #expect(throws: CancellationError.self) { _ = try await first.value }

            try Array("hello".utf8).withUnsafeBytes { try writer.write(contentsOf: $0) }
            let second = Task {
                var iterator = chunks.makeAsyncIterator()
                return try await iterator.next()
            }
            let chunk = try #require(try await second.value)
            #expect(chunk.withUnsafeBytes { Array($0) } == Array("hello".utf8))
        }
    }

    /// A cancellation that arrives after its read returned leaves a signal behind; the next,
    /// uncancelled read consumes it and returns the data.
    @Test func wakeSignalLeftByALateCancellationIsIgnored() async throws {
        let ends = try makePipe()
        defer {
            try? ends.read.close()
            try? ends.write.close()
        }
        let chunks = try await FileChunks.reading(ends.read, chunkSize: Self.chunkSize)
        chunks.reader.cancel()  // no read in progress: the signal is stale
        try Array("hello".utf8).withUnsafeBytes { try ends.write.write(contentsOf: $0) }
        var iterator = chunks.makeAsyncIterator()
        let chunk = try #require(try await iterator.next())
        #expect(chunk.withUnsafeBytes { Array($0) } == Array("hello".utf8))
    }
}
