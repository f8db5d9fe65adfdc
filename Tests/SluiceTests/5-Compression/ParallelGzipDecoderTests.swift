import Testing
@testable import Sluice

/// `ParallelGzipDecoder` on BGZF members (the SAM specification, section 4.1: a `BC` subfield
/// with the member's size - 1), which its workers decode in batches into shared output chunks.
@Suite(.timeLimit(.minutes(3)))
struct ParallelGzipDecoderTests {
    /// One BGZF member of `data`, its deflate data from Sluice's own encoder.
    static func bgzfMember(_ data: [UInt8]) async throws -> [UInt8] {
        let gzip = try await drive(try GzipEncoder(), data, chunkSize: 1 << 20).output
        #expect(gzip[3] == 0, "a plain 10-byte header")
        let deflate = gzip[10..<gzip.count - 8]
        let size = 18 + deflate.count + 8
        var member: [UInt8] = [0x1F, 0x8B, 8, 4, 0, 0, 0, 0, 0, 0xFF, 6, 0, 0x42, 0x43, 2, 0]
        member += [UInt8(truncatingIfNeeded: size - 1), UInt8(truncatingIfNeeded: (size - 1) >> 8)]
        return member + deflate + gzip.suffix(8)
    }

    /// `member` (from ``bgzfMember(_:)``) with a file name after its extra field (FNAME), its
    /// BSIZE grown to match.
    static func named(_ member: [UInt8], _ name: String) -> [UInt8] {
        var named = member
        named[3] |= 0x08
        named.insert(contentsOf: Array(name.utf8) + [0], at: 18)
        let size = named.count - 1
        (named[16], named[17]) = (UInt8(truncatingIfNeeded: size), UInt8(truncatingIfNeeded: size >> 8))
        return named
    }

    /// A header whose end is found only after more bytes than it holds were taken (a name is
    /// looked for 64 bytes at a time) gives the rest back to its member, whatever the chunks:
    /// before, those bytes were dropped and the rest of the input taken for trailing garbage.
    @Test(arguments: [7, 100, 1000, 65_536])
    func namedMembersStraddlingChunksLoseNoByte(chunkSize: Int) async throws {
        var (file, input): ([UInt8], [UInt8]) = ([], [])
        for number in 0..<300 {
            let record = Array("record \(number)\n".utf8)
            file += Self.named(try await Self.bgzfMember(record), "name-\(number).txt")
            input += record
        }
        let run = try await drive(ParallelGzipDecoder(threadCount: 2, outputChunkSize: 4096), file, chunkSize: chunkSize)
        #expect(run.output == input)
        #expect(run.summary.warnings.isEmpty, "\(run.summary.warnings)")
    }

    /// 200 members of 1 to 65,280 bytes, and their input.
    static func members() async throws -> (file: [UInt8], members: [[UInt8]], input: [UInt8]) {
        var generator = SplitMix64(seed: 28)
        let input = sampleData(count: 200 * 40_000)
        var (members, start): ([[UInt8]], Int) = ([], 0)
        while start < input.count {
            let count = min(input.count - start, Int.random(in: 1...65_280, using: &generator))
            members.append(try await bgzfMember(Array(input[start..<start + count])))
            start += count
        }
        return (members.flatMap { $0 }, members, input)
    }

    /// The same bytes whatever the output chunk size (members straddle chunks; a chunk of 1 GiB
    /// is no buffer of 1 GiB: a batch's chunk holds at most what its trailers promise) and threads.
    @Test(arguments: [(1, 4096), (2, 4096), (2, 65_536), (2, 100_000), (3, 1 << 20), (2, 1 << 30)])
    func bgzfMembersDecodeIntoSharedChunks(threads: Int, outputChunkSize: Int) async throws {
        let (file, _, input) = try await Self.members()
        let run = try await drive(ParallelGzipDecoder(threadCount: threads, outputChunkSize: outputChunkSize), file, chunkSize: 50_000)
        #expect(run.output == input)
        #expect(run.summary.warnings.isEmpty)
    }

    /// A member damaged in its data, its CRC-32 or its ISIZE (one more, one less): what the
    /// sequential decoder gives, the same error.
    @Test(arguments: ["data", "crc", "isize+1", "isize-1"])
    func aDamagedMemberInABatchIsTheSequentialDecodersError(damage: String) async throws {
        var (_, members, _) = try await Self.members()
        var member = members[57]
        switch damage {
        case "data": member[40] ^= 0x20
        case "crc": member[member.count - 8] ^= 1
        case "isize+1": member[member.count - 4] &+= 1
        default: member[member.count - 4] &-= 1
        }
        members[57] = member
        let file = members.flatMap { $0 }
        let sequential = await Result(catching: { try await drive(GzipDecoder(), file, chunkSize: 50_000) })
        let parallel = await Result(catching: {
            try await drive(ParallelGzipDecoder(threadCount: 2, outputChunkSize: 65_536), file, chunkSize: 50_000)
        })
        guard case .failure(let expected as GzipError) = sequential else { Issue.record("gzip accepts it: \(damage)"); return }
        guard case .failure(let error as GzipError) = parallel else { Issue.record("accepted: \(damage)"); return }
        #expect(error.kind == expected.kind, "\(damage)")
    }
}
