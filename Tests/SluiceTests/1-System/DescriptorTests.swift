#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SluiceTestSupport
import Testing
@testable import Sluice

/// ``Descriptor`` through the ``SystemCalls`` seam: interrupted calls and short counts are
/// retried, other errors surface unchanged.
@Suite struct DescriptorTests {
    /// A fake `read(2)` over `data`: every other call fails with `EINTR`, the others deliver
    /// between 1 and `maximumCount` bytes (seeded), then 0 at the end.
    static func interruptingReader(
        _ data: [UInt8], maximumCount: Int, seed: UInt64
    ) -> (calls: SystemCalls, readCalls: Counter) {
        struct State {
            var offset = 0
            var interruptNext = true
            var generator: SplitMix64
        }
        let state = LockedValue(State(generator: SplitMix64(seed: seed)))
        let readCalls = Counter()
        let calls = SystemCalls(
            read: { _, buffer, count in
                readCalls.increment()
                return state.withLock { state -> Result<Int, ErrorNumber> in
                    defer { state.interruptNext.toggle() }
                    if state.interruptNext { return .failure(.interrupted) }
                    let wanted = 1 + Int(state.generator.next() % UInt64(maximumCount))
                    let length = min(wanted, count, data.count - state.offset)
                    data.withUnsafeBytes { source in
                        buffer.copyMemory(from: source.baseAddress! + state.offset, byteCount: length)
                    }
                    state.offset += length
                    return .success(length)
                }
            },
            write: SystemCalls.live.write,
            fsync: SystemCalls.live.fsync)
        return (calls, readCalls)
    }

    /// A fake `write(2)` that collects bytes: every other call fails with `EINTR`, the others
    /// take between 1 and `maximumCount` bytes (seeded).
    static func interruptingWriter(
        maximumCount: Int, seed: UInt64
    ) -> (calls: SystemCalls, written: LockedValue<[UInt8]>) {
        let written = LockedValue<[UInt8]>([])
        let state = LockedValue((interruptNext: true, generator: SplitMix64(seed: seed)))
        let calls = SystemCalls(
            read: SystemCalls.live.read,
            write: { _, buffer, count in
                let length = state.withLock { state -> Int? in
                    defer { state.interruptNext.toggle() }
                    if state.interruptNext { return nil }
                    return min(count, 1 + Int(state.generator.next() % UInt64(maximumCount)))
                }
                guard let length else { return .failure(.interrupted) }
                let bytes = Array(UnsafeRawBufferPointer(start: buffer, count: length))
                written.withLock { $0 += bytes }
                return .success(length)
            },
            fsync: SystemCalls.live.fsync)
        return (calls, written)
    }

    @Test(arguments: [1, 3, 100])
    func readFullyRetriesInterruptionsAndShortReads(maximumCount: Int) throws {
        let seed: UInt64 = 0xD1E5_0001 &+ UInt64(maximumCount)
        let data = randomBytes(count: 1000, seed: seed)
        let (calls, readCalls) = Self.interruptingReader(data, maximumCount: maximumCount, seed: seed)
        let descriptor = Descriptor(rawValue: -1)  // the fake never looks at it

        var buffer = [UInt8](repeating: 0, count: 600)
        let first = try buffer.withUnsafeMutableBytes { try descriptor.readFully(into: $0, system: calls) }
        #expect(first == 600, "seed \(seed)")
        #expect(buffer == Array(data[..<600]), "seed \(seed)")

        let second = try buffer.withUnsafeMutableBytes { try descriptor.readFully(into: $0, system: calls) }
        #expect(second == 400, "a short count only at the end of the file; seed \(seed)")
        #expect(Array(buffer[..<400]) == Array(data[600...]), "seed \(seed)")
        #expect(readCalls.current > 2, "the fake really interrupted and split the reads")
    }

    @Test func readRetriesInterruptionButReturnsAShortCount() throws {
        let (calls, _) = Self.interruptingReader(Array(1...10), maximumCount: 1, seed: 1)
        var buffer = [UInt8](repeating: 0, count: 10)
        let count = try buffer.withUnsafeMutableBytes {
            try Descriptor(rawValue: -1).read(into: $0, system: calls)
        }
        #expect(count == 1)
        #expect(buffer[0] == 1)
    }

    @Test(arguments: [1, 7, 4096])
    func writeRetriesInterruptionsAndShortWrites(maximumCount: Int) throws {
        let seed: UInt64 = 0xD1E5_0002 &+ UInt64(maximumCount)
        let data = randomBytes(count: 10_000, seed: seed)
        let (calls, written) = Self.interruptingWriter(maximumCount: maximumCount, seed: seed)
        try data.withUnsafeBytes { try Descriptor(rawValue: -1).write(contentsOf: $0, system: calls) }
        #expect(written.withLock { $0 } == data, "seed \(seed)")
    }

    @Test func readErrorSurfaces() throws {
        let calls = SystemCalls(
            read: { _, _, _ in .failure(.ioError) }, write: SystemCalls.live.write, fsync: SystemCalls.live.fsync)
        var buffer = [UInt8](repeating: 0, count: 16)
        let error = try #require(throws: ErrorNumber.self) {
            try buffer.withUnsafeMutableBytes { try Descriptor(rawValue: -1).readFully(into: $0, system: calls) }
        }
        #expect(error == .ioError)
    }

    @Test func readErrorAfterSomeBytesSurfaces() throws {
        let calls = Counter()
        let system = SystemCalls(
            read: { _, buffer, _ in
                if calls.increment() == 1 {
                    buffer.storeBytes(of: 7, as: UInt8.self)
                    return .success(1)
                }
                return .failure(.ioError)
            },
            write: SystemCalls.live.write, fsync: SystemCalls.live.fsync)
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(throws: ErrorNumber.ioError) {
            try buffer.withUnsafeMutableBytes { try Descriptor(rawValue: -1).readFully(into: $0, system: system) }
        }
    }

    @Test func writeErrorSurfacesAfterTheBytesBeforeIt() throws {
        let written = Counter()
        let system = SystemCalls(
            read: SystemCalls.live.read,
            write: { _, _, count in
                if written.increment() == 1 { return .success(min(count, 3)) }
                return .failure(.ioError)
            },
            fsync: SystemCalls.live.fsync)
        let error = try #require(throws: ErrorNumber.self) {
            try [UInt8](repeating: 1, count: 10).withUnsafeBytes {
                try Descriptor(rawValue: -1).write(contentsOf: $0, system: system)
            }
        }
        #expect(error == .ioError)
        #expect(written.current == 2)
    }

    @Test func synchronizeRetriesInterruption() throws {
        let calls = Counter()
        let system = SystemCalls(
            read: SystemCalls.live.read, write: SystemCalls.live.write,
            fsync: { _ in calls.increment() < 3 ? .failure(.interrupted) : .success(()) })
        try Descriptor(rawValue: -1).synchronize(system: system)
        #expect(calls.current == 3)
    }

    @Test func realPipeRoundTrip() throws {
        let ends = try makePipe()
        defer {
            try? ends.read.close()
        }
        let data = Array("through a real pipe".utf8)
        try data.withUnsafeBytes { try ends.write.write(contentsOf: $0) }
        try ends.write.close()
        #expect(try readAll(ends.read) == data)
        #expect(try ends.read.status().kind == .fifo)
    }

    @Test func openReportsTheMissingPath() throws {
        let error = try #require(throws: FileError.self) {
            try Descriptor.open("/nonexistent-sluice-test/x", O_RDONLY)
        }
        #expect(error.code == .notFound)
        #expect(error.operation == .open)
        #expect(error.path == "/nonexistent-sluice-test/x")
        #expect(error.description == "cannot open '/nonexistent-sluice-test/x': No such file or directory")
    }

    @Test(arguments: [1, 3, 100])
    func gatheredChunksAreWrittenWholeAndInOrderThroughInterruptionsAndShortWrites(maximumCount: Int) throws {
        // A seam without a `writev` of its own writes each buffer through its `write`: every
        // short count and EINTR of the fake lands in the middle of a batch of chunks.
        let (calls, written) = Self.interruptingWriter(maximumCount: maximumCount, seed: 0xBA7C_0000 &+ UInt64(maximumCount))
        let chunks = (0..<40).map { index in Chunk((0..<(index % 7)).map { UInt8((index &* 31 &+ $0) & 0xFF) }) }
        try Descriptor(rawValue: -1).write(chunks, path: "fake", system: calls)
        #expect(written.withLock { $0 } == chunks.flatMap(\.bytes))
    }

    @Test func aGatheredWriteOfMoreThanIOVMaxBuffersReachesTheFile() async throws {
        try await withScratchDirectory { scratch in
            let path = scratch.appending("gathered")
            let descriptor = try Descriptor.open(path, O_WRONLY | O_CREAT | O_EXCL, permissions: 0o600)
            let chunks = (0..<3000).map { Chunk([UInt8($0 & 0xFF), UInt8($0 >> 8)]) }
            try descriptor.closeAfter { () throws(FileError) in try descriptor.write(chunks, path: path) }
            #expect(try readFile(path) == chunks.flatMap(\.bytes))
        }
    }

    /// No call is given more than ``Descriptor/maximumWriteSize`` bytes: a buffer over it goes
    /// in several `write(2)`s, a batch over it in several `writev(2)`s (a buffer over it cut),
    /// every byte once and in order.
    @Test func noCallIsGivenMoreThanTheMaximumWriteSize() throws {
        let limit = Descriptor.maximumWriteSize
        let written = LockedValue<[UInt8]>([])
        let largest = LockedValue(0)
        let system = SystemCalls(
            read: SystemCalls.live.read,
            write: { _, base, count in
                largest.withLock { $0 = max($0, count) }
                written.withLock { $0 += UnsafeRawBufferPointer(start: base, count: count) }
                return .success(count)
            },
            fsync: SystemCalls.live.fsync,
            writev: { _, vectors, count in
                let buffers = UnsafeBufferPointer(start: vectors, count: Int(count))
                largest.withLock { $0 = max($0, buffers.reduce(0) { $0 + $1.iov_len }) }
                for vector in buffers {
                    written.withLock { $0 += UnsafeRawBufferPointer(start: vector.iov_base, count: vector.iov_len) }
                }
                return .success(buffers.reduce(0) { $0 + $1.iov_len })
            })
        let data = randomBytes(count: 3 * limit + 123, seed: 7)
        try data.withUnsafeBytes { try Descriptor(rawValue: -1).write(contentsOf: $0, system: system) }
        #expect(written.withLock { $0 } == data && largest.withLock { $0 } == limit)

        written.withLock { $0 = [] }
        largest.withLock { $0 = 0 }
        let sizes = [100, limit - 50, 60, 2 * limit + 1, 10, 10]
        let chunks = sizes.indices.map { Chunk(randomBytes(count: sizes[$0], seed: UInt64($0))) }
        try Descriptor(rawValue: -1).write(chunks, path: "x", system: system)
        #expect(written.withLock { $0 } == chunks.flatMap { $0.withUnsafeBytes { Array($0) } })
        #expect(largest.withLock { $0 } <= limit)
    }
}
