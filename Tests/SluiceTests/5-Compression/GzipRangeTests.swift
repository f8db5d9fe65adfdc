import Testing
@testable import Sluice
import SluiceTestSupport

/// `GzipDecoder.decompressedChunks(of:in:)`: a range of a gzip file's output, read at random
/// where an index says where its segments start, decoded from the start anywhere else.
@Suite(.timeLimit(.minutes(3)))
struct GzipRangeTests {
    /// Three segments of 2 MiB and a bit.
    static let input = sampleData(count: (5 << 20) + 4321)

    static func collect(
        _ path: Pathname, _ range: Range<Int64>, threads: Int = 1, chunkSize: Int = 1 << 20, warnings: Recorded? = nil
    ) async throws -> [UInt8] {
        let chunks = try await GzipDecoder.decompressedChunks(
            of: path, in: range, chunkSize: chunkSize, threadCount: threads, onWarning: { warnings?.append($0) })
        var bytes: [UInt8] = []
        for try await chunk in chunks {
            #expect(chunk.count > 0 && chunk.count <= chunkSize)
            bytes += chunk.withUnsafeBytes { Array($0) }
        }
        return bytes
    }

    /// The warnings a sequence reported.
    final class Recorded: Sendable {
        let values = LockedValue<[StageWarning]>([])
        func append(_ warning: StageWarning) { values.withLock { $0.append(warning) } }
        var all: [StageWarning] { values.withLock { $0 } }
    }

    static func slice(_ data: [UInt8], _ range: Range<Int64>) -> [UInt8] {
        let lower = Int(min(range.lowerBound, Int64(data.count))), upper = Int(min(range.upperBound, Int64(data.count)))
        return Array(data[lower..<upper])
    }

    /// Ranges inside one segment, across a boundary, over all, at and past the end, empty.
    static let ranges: [Range<Int64>] = [
        100..<4196, (2 << 20) - 10..<(2 << 20) + 10, 1_000_000..<5_000_000, 0..<Int64.max, (5 << 20)..<Int64.max,
        Int64(input.count) - 1..<Int64(input.count) + 100, Int64(input.count)..<Int64.max, 7..<7,
    ]

    @Test(arguments: [1, 2])
    func rangesOfAnIndexedFile(threads: Int) async throws {
        try await withScratchDirectory { directory in
            let path = directory.appending("input.gz")
            let (member, patched) = try await GzipIndexTests.indexed(Self.input)
            #expect(patched)
            try writeFile(path, member)
            for range in Self.ranges {
                let warnings = Recorded()
                let bytes = try await Self.collect(path, range, threads: threads, chunkSize: 300_000, warnings: warnings)
                #expect(bytes == Self.slice(Self.input, range), "\(range)")
                #expect(warnings.all.isEmpty)
            }
        }
    }

    /// A range reads the header and the segments it overlaps, nothing else: the other
    /// segments' data wrecked, it still decodes, with no warning.
    @Test func onlyTheSegmentsARangeOverlapsAreRead() async throws {
        try await withScratchDirectory { directory in
            let path = directory.appending("input.gz")
            var (member, _) = try await GzipIndexTests.indexed(Self.input)
            let (found, start) = GzipIndexTests.index(of: member)
            let index = try #require(found)
            let first = Int(index.segments[0].compressedLength), second = Int(index.segments[1].compressedLength)
            for offset in stride(from: start, to: start + first, by: 97) { member[offset] ^= 0xA5 }
            for offset in stride(from: start + first + second, to: member.count - 8, by: 97) { member[offset] ^= 0xA5 }
            try writeFile(path, member)
            let range: Range<Int64> = (2 << 20) + 5..<(3 << 20)
            let reader = try GzipRangeReader(
                path: path, range: range, chunkSize: 1 << 20, threadCount: 1, executor: BlockingIOExecutor())
            #expect(reader.startsAtAccessPoint)
            #expect(try await Self.collect(path, range) == Self.slice(Self.input, range))
        }
    }

    /// A segment whose CRC-32 the index misstates: a warning naming it, and the right bytes,
    /// decoded from the member's start; the same for a file of gzip's own (no index).
    @Test(arguments: [1, 2])
    func aForgedIndexAndNoIndexGiveTheRightBytes(threads: Int) async throws {
        try await withScratchDirectory { directory in
            var (member, _) = try await GzipIndexTests.indexed(Self.input)
            member[16 + GzipIndex.fixedLength + 8 + 4] ^= 1  // the second segment's CRC-32
            try writeFile(directory.appending("forged.gz"), member)
            let range: Range<Int64> = 1_000_000..<4_000_000
            let warnings = Recorded()
            let bytes = try await Self.collect(directory.appending("forged.gz"), range, threads: threads, warnings: warnings)
            #expect(bytes == Self.slice(Self.input, range))
            #expect(warnings.all.map(\.message).contains { $0.contains("member 1, segment 2 does not match its index") })

            let compressed = try await drive(try GzipEncoder(), Self.input, chunkSize: 1 << 20).output
            try writeFile(directory.appending("plain.gz"), compressed)
            let reader = try GzipRangeReader(
                path: directory.appending("plain.gz"), range: range, chunkSize: 1 << 20, threadCount: 1,
                executor: BlockingIOExecutor())
            #expect(!reader.startsAtAccessPoint)
            #expect(try await Self.collect(directory.appending("plain.gz"), range, threads: threads) == Self.slice(Self.input, range))
        }
    }

    /// Two indexed members and a plain one: members before the range are passed over by their
    /// indexes; a range that reaches the plain member decodes it from its start.
    @Test func concatenatedMembers() async throws {
        try await withScratchDirectory { directory in
            let (a, _) = try await GzipIndexTests.indexed(Self.input)
            let other = sampleData(count: (4 << 20) + 77).map { $0 ^ 0x3C }
            let (b, _) = try await GzipIndexTests.indexed(other)
            let plain = try await drive(try GzipEncoder(), Array(Self.input.prefix(100_000)), chunkSize: 1 << 20).output
            try writeFile(directory.appending("all.gz"), a + b + plain + a)
            let all = Self.input + other + Array(Self.input.prefix(100_000)) + Self.input
            let size = Int64(Self.input.count)
            let ranges: [Range<Int64>] = [
                size + 100..<size + 200, size - 50..<size + 50, size + Int64(other.count) - 10..<size + Int64(other.count) + 500_000,
                Int64(all.count) - 1000..<Int64.max, 0..<Int64.max,
            ]
            for range in ranges {
                #expect(try await Self.collect(directory.appending("all.gz"), range, threads: 2) == Self.slice(all, range), "\(range)")
            }
            let reader = try GzipRangeReader(
                path: directory.appending("all.gz"), range: size + 100..<size + 200, chunkSize: 1 << 20, threadCount: 1,
                executor: BlockingIOExecutor())
            guard case .indexed(let member, _, _) = reader.start else { Issue.record("not indexed: \(reader.start)"); return }
            #expect(member.number == 1 && member.input == Int64(a.count) && member.output == size)
        }
    }

    /// Not gzip, a directory, a missing file: thrown by the opening.
    @Test func whatCannotBeOpenedIsThrown() async throws {
        try await withScratchDirectory { directory in
            try writeFile(directory.appending("text"), Array("hello".utf8))
            await #expect(throws: GzipError.self) { _ = try await Self.collect(directory.appending("text"), 0..<10) }
            await #expect(throws: FileError.self) { _ = try await Self.collect(directory.path, 0..<10) }
            await #expect(throws: FileError.self) { _ = try await Self.collect(directory.appending("missing"), 0..<10) }
        }
    }

    /// A consumer that stops early releases the producing task: the range's last chunks are
    /// never decoded, and nothing waits for them.
    @Test func aConsumerThatStopsEarly() async throws {
        try await withScratchDirectory { directory in
            let (member, _) = try await GzipIndexTests.indexed(Self.input)
            try writeFile(directory.appending("input.gz"), member)
            let chunks = try await GzipDecoder.decompressedChunks(of: directory.appending("input.gz"), in: 0..., chunkSize: 4096)
            var iterator = chunks.makeAsyncIterator()
            let first = try #require(try await iterator.next())
            #expect(first.withUnsafeBytes { Array($0) } == Array(Self.input.prefix(4096)))
        }
    }
}
