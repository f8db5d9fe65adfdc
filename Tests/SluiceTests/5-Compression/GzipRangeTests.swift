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
            #expect(reader.isIndexed)
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
            #expect(!reader.isIndexed)
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

    /// Random bytes, stored as they are: a bit flipped in the second segment's data decodes
    /// without an inflate error, so only a CRC-32 catches it. The range gives a warning naming
    /// the segment, then its member is decoded from its start through its trailer, whose CRC-32
    /// fails: an error, never the flipped byte.
    @Test(arguments: [1, 2])
    func aFlippedBitInStoredDataIsAnError(threads: Int) async throws {
        try await withScratchDirectory { directory in
            let input = randomBytes(count: (5 << 20) + 99, seed: 41)
            var (member, _) = try await GzipIndexTests.indexed(input)
            let (found, start) = GzipIndexTests.index(of: member)
            let index = try #require(found)
            member[start + Int(index.segments[0].compressedLength) + 1000] ^= 0x10
            try writeFile(directory.appending("flipped.gz"), member)
            // Decoded whole, the member inflates, and its trailer's CRC-32 says no.
            await #expect {
                _ = try await drive(GzipDecoder(), member, chunkSize: 1 << 20)
            } throws: { error in
                if case .crc32Mismatch = (error as? GzipError)?.kind { true } else { false }
            }
            let warnings = Recorded()
            await #expect {
                _ = try await Self.collect(directory.appending("flipped.gz"), (2 << 20) + 500..<(2 << 20) + 2000, threads: threads, warnings: warnings)
            } throws: { error in
                if case .crc32Mismatch = (error as? GzipError)?.kind { true } else { false }
            }
            #expect(warnings.all.map(\.message).contains { $0.contains("member 1, segment 2 does not match its index") })
        }
    }

    /// A file cut inside its trailer: the segments match, the trailer does not say what the
    /// index says: a warning, and the member decoded from its start ends in `truncatedInput`;
    /// a member passed over on the way to a range is checked the same way.
    @Test func aTruncatedTrailer() async throws {
        try await withScratchDirectory { directory in
            let (member, _) = try await GzipIndexTests.indexed(Self.input)
            try writeFile(directory.appending("cut.gz"), Array(member.dropLast(3)))
            let warnings = Recorded()
            await #expect {
                _ = try await Self.collect(directory.appending("cut.gz"), 100..<200, warnings: warnings)
            } throws: { error in
                if case .truncatedInput = (error as? GzipError)?.kind { true } else { false }
            }
            #expect(warnings.all.map(\.message) == ["member 1: its index ends past the end of the file: decoded from the member's start"])

            // The first member's trailer altered (its ISIZE), a range in the second member.
            var first = member
            first[first.count - 1] ^= 1
            try writeFile(directory.appending("two.gz"), first + member)
            let size = Int64(Self.input.count)
            let later = Recorded()
            await #expect {
                _ = try await Self.collect(directory.appending("two.gz"), size + 10..<size + 20, warnings: later)
            } throws: { error in
                if case .sizeMismatch = (error as? GzipError)?.kind { true } else { false }
            }
            #expect(later.all.map(\.message) == ["member 1: its index does not match the member's trailer: decoded from the member's start"])
        }
    }

    /// A range past the end of an indexed file padded with zeros (as tape blocks are), or
    /// followed by garbage: nothing, the warnings a whole decode gives (none for NUL padding,
    /// one for garbage), and the range counts as started at an access point (`-v` says nothing
    /// of a missing index).
    @Test(arguments: [("1,000 NULs", 0), ("junk", 1)])
    func aRangePastTheEndOfAPaddedFile(padding name: String, warningCount: Int) async throws {
        let padding = name == "junk" ? Array("junk".utf8) : [UInt8](repeating: 0, count: 1000)
        try await withScratchDirectory { directory in
            let (member, _) = try await GzipIndexTests.indexed(Self.input)
            try writeFile(directory.appending("padded.gz"), member + padding)
            let size = Int64(Self.input.count)
            let reader = try GzipRangeReader(
                path: directory.appending("padded.gz"), range: size + 10..<size + 20, chunkSize: 1 << 20, threadCount: 1,
                executor: BlockingIOExecutor())
            #expect(reader.isIndexed)
            let warnings = Recorded()
            #expect(try await Self.collect(directory.appending("padded.gz"), size + 10..<size + 20, warnings: warnings).isEmpty)
            #expect(warnings.all.count == warningCount)
            #expect(try await Self.collect(directory.appending("padded.gz"), size - 10..<size + 20) == Array(Self.input.suffix(10)))
        }
    }

    /// An iterator released while its producing task waits to send (the consumer took one
    /// chunk of many): the task is cancelled and ends.
    @Test func releasingTheIteratorEndsItsTask() async throws {
        try await withScratchDirectory { directory in
            try writeFile(directory.appending("plain.gz"), try await drive(try GzipEncoder(), Self.input, chunkSize: 1 << 20).output)
            let chunks = try await GzipRangeChunks.open(directory.appending("plain.gz"), range: 0..<Int64.max, chunkSize: 4096)
            var iterator: GzipRangeChunks.AsyncIterator? = chunks.makeAsyncIterator()
            _ = try await iterator!.next()
            let task = try #require(iterator!.production?.task)
            iterator = nil
            await task.value
        }
    }

    /// A producing task cancelled before it starts reads nothing: `CancellationError` before
    /// the first read, on a file without an index (a long prefix to decode) and with one.
    @Test func aCancelledProductionStopsBeforeItsFirstRead() async throws {
        try await withScratchDirectory { directory in
            try writeFile(directory.appending("plain.gz"), try await drive(try GzipEncoder(), Self.input, chunkSize: 1 << 20).output)
            try writeFile(directory.appending("indexed.gz"), try await GzipIndexTests.indexed(Self.input).bytes)
            for name in ["plain.gz", "indexed.gz"] {
                let reader = try GzipRangeReader(
                    path: directory.appending(Pathname(name)), range: (5 << 20)..<(5 << 20) + 10, chunkSize: 1 << 20, threadCount: 2,
                    executor: BlockingIOExecutor())
                let task = Task {
                    withUnsafeCurrentTask { $0?.cancel() }
                    try await reader.produce { _ in Issue.record("a chunk after the cancellation") }
                }
                await #expect(throws: CancellationError.self, "\(name)") { try await task.value }
            }
        }
    }

    /// A member whose index does not match, decoded from its start through its trailer, then a
    /// damaged member after it: the range, all in the first member, is out and right; what the
    /// last read took of the next member is not the range's and fails nothing.
    @Test func damageAfterARangeDecodedThroughItsTrailerIsNotTheRanges() async throws {
        try await withScratchDirectory { directory in
            var (member, _) = try await GzipIndexTests.indexed(Self.input)
            member[16 + GzipIndex.fixedLength + 4] ^= 1  // the first segment's CRC-32
            let damaged: [UInt8] = [0x1F, 0x8B, 7, 0, 0, 0, 0, 0, 0, 3] + Array(repeating: 0x55, count: 100)
            try writeFile(directory.appending("two.gz"), member + damaged)
            let warnings = Recorded()
            #expect(try await Self.collect(directory.appending("two.gz"), 0..<100, warnings: warnings) == Array(Self.input.prefix(100)))
            #expect(warnings.all.map(\.message).contains { $0.contains("member 1, segment 1 does not match its index") })
            // The whole file still fails where gzip fails.
            await #expect(throws: GzipError.self) { _ = try await Self.collect(directory.appending("two.gz"), 0..<Int64.max) }
        }
    }
}
