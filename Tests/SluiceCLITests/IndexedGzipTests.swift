import Testing
@testable import Sluice
import SluiceCLI
import SluiceTestSupport

/// `sluice compress` of a file writes one standard gzip member whose header carries an index
/// (<doc:IndexedGzip>): every reader reads it as any other and lists its true size.
@Suite(.timeLimit(.minutes(3)))
struct IndexedGzipTests {
    /// 5 MiB and a bit: three segments of 2 MiB.
    static let size = (5 << 20) + 4321

    /// The index of `member`, if its header holds one.
    static func index(of member: [UInt8]) -> GzipIndex? {
        guard member.count > 16, member[3] & 0x04 != 0, member[12] == 0x53, member[13] == 0x4C else { return nil }
        let length = Int(member[14]) | Int(member[15]) << 8
        return GzipIndex(subfield: member[16..<16 + length])
    }

    @Test func everyReaderReadsAnIndexedMemberAndListsItsTrueSize() async throws {
        let sandbox = try Sandbox()
        let data = mixedData(count: Self.size)
        try sandbox.write(data, to: "input")
        let compressed = try await CLI.run(["compress", "-k", "input"], in: sandbox)
        #expect(compressed.status == 0, "\(compressed.stderr)")
        let member = try #require(sandbox.contents("input.gz"))
        let index = try #require(Self.index(of: member))
        #expect(index.segments.count == 3 && index.totalSize == Int64(Self.size))
        let readers = try await CLI.shell(
            """
            set -e
            gzip -t input.gz
            gzip -dc input.gz | cmp - input
            pigz -dc input.gz | cmp - input
            gzip -l input.gz | awk 'NR == 2 { print $2 }' > listed
            if command -v bgzip >/dev/null; then bgzip -dc input.gz | cmp - input; else echo "bgzip is not installed" >&2; fi
            if command -v python3 >/dev/null; then
              python3 -c 'import gzip, zlib, sys; d = open("input.gz", "rb").read(); s = open("input", "rb").read(); assert gzip.decompress(d) == s; assert zlib.decompressobj(31).decompress(d) == s'
            fi
            "$SLUICE" decompress -c input.gz | cmp - input
            """, in: sandbox)
        #expect(readers.status == 0, "\(readers.stderr)")
        #expect(sandbox.text("listed") == "\(Self.size)\n")
    }

    /// The output depends on the input alone: the same for any thread count and chunk size.
    @Test func theOutputIsTheSameForAnyThreadCountAndChunkSize() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(mixedData(count: Self.size), to: "input")
        var outputs: [[UInt8]] = []
        for options in [["-p", "1"], ["-p", "2", "--chunk-size", "4K"], ["-p", "3", "--chunk-size", "1M"]] {
            let result = try await CLI.run(["compress", "-k", "-f"] + options + ["input"], in: sandbox)
            #expect(result.status == 0, "\(result.stderr)")
            outputs.append(try #require(sandbox.contents("input.gz")))
        }
        #expect(Set(outputs).count == 1)
        #expect(Self.index(of: outputs[0]) != nil)
    }

    /// Standard output gets access points and no index (nothing to write back); `--no-index`
    /// writes the format before 0.2; a file of one segment or less has no index either.
    @Test func noIndexForAStreamForNoIndexOrForOneSegment() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(mixedData(count: Self.size), to: "input")
        try sandbox.write(mixedData(count: 2 << 20), to: "small")
        let result = try await CLI.shell(
            """
            set -e
            "$SLUICE" compress -c input > stream.gz
            "$SLUICE" compress -k --no-index -o plain.gz input
            "$SLUICE" compress -k small
            "$SLUICE" compress -c --no-index small > small-plain.gz
            gzip -dc stream.gz | cmp - input
            gzip -dc plain.gz | cmp - input
            """, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        let stream = try #require(sandbox.contents("stream.gz"))
        #expect(stream[3] == 0)
        #expect(try #require(sandbox.contents("plain.gz"))[3] == 0)
        #expect(sandbox.contents("small.gz") == sandbox.contents("small-plain.gz"))
    }

    /// Two indexed files one after the other are two members: every reader decodes both.
    @Test func twoIndexedFilesConcatenated() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(mixedData(count: Self.size), to: "a")
        try sandbox.write(mixedData(count: Self.size + 99), to: "b")
        let result = try await CLI.shell(
            """
            set -e
            "$SLUICE" compress -k a b
            cat a.gz b.gz > both.gz
            cat a b > both
            gzip -dc both.gz | cmp - both
            pigz -dc both.gz | cmp - both
            "$SLUICE" decompress -c both.gz | cmp - both
            """, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
    }
}

/// `decompress -p N`: an indexed member's segments at once, checked against the index; BGZF
/// members at once; anything else as before. Never output that `gzip -d` would not give.
@Suite(.timeLimit(.minutes(3)))
struct ParallelDecompressTests {
    /// An indexed file of `size` bytes, compressed by sluice, in a new sandbox.
    static func indexedFile(size: Int = IndexedGzipTests.size) async throws -> (Sandbox, [UInt8]) {
        let sandbox = try Sandbox()
        let data = mixedData(count: size)
        try sandbox.write(data, to: "input")
        let result = try await CLI.run(["compress", "-k", "input"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        return (sandbox, data)
    }

    @Test(arguments: ["1", "2", "3"])
    func anIndexedFileDecodesOnAnyThreadCount(threads: String) async throws {
        let (sandbox, data) = try await Self.indexedFile()
        let result = try await CLI.run(["decompress", "-p", threads, "-c", "input.gz"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == data)
        #expect(result.stderr.isEmpty)
    }

    /// An index altered (a CRC-32; two lengths changed so they still add up): a warning
    /// naming the segment, exit 2, and the right output, from one thread on from there.
    @Test(arguments: ["crc", "lengths"])
    func anAlteredIndexGivesAWarningAndTheRightOutput(alteration: String) async throws {
        let (sandbox, data) = try await Self.indexedFile()
        var member = try #require(sandbox.contents("input.gz"))
        let table = 16 + GzipIndex.fixedLength
        if alteration == "crc" {
            member[table + 8 + 4] ^= 1  // the second segment's CRC-32
        } else {
            // The first segment 3 bytes longer, the second 3 shorter.
            member[table] = member[table] &+ 3
            member[table + 8] = member[table + 8] &- 3
        }
        try sandbox.write(member, to: "altered.gz")
        let gzip = try await CLI.shell("gzip -dc altered.gz | cmp - input", in: sandbox)
        #expect(gzip.status == 0, "gzip reads it: \(gzip.stderr)")
        let result = try await CLI.run(["decompress", "-p", "2", "-c", "altered.gz"], in: sandbox)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stdout == data)
        #expect(result.stderr.contains(alteration == "crc" ? "segment 2 does not match its index" : "segment 1 does not match its index"), "\(result.stderr)")
    }

    /// Damaged data under a valid index: exit 1, as `gzip -d` fails too, and before the
    /// failure the warning naming the segment that did not match, whether the file is decoded
    /// alone (to standard output) or as one of several (to files, none left behind).
    @Test func damagedDataFailsAsGzipDoesAfterNamingTheSegment() async throws {
        let (sandbox, _) = try await Self.indexedFile()
        var member = try #require(sandbox.contents("input.gz"))
        let index = try #require(IndexedGzipTests.index(of: member))
        // A byte in the middle of the second segment's compressed bytes, after the header (its
        // fixed 10 bytes, XLEN and the extra field, no name: the flags say FEXTRA only).
        #expect(member[3] == 0x04)
        let headerLength = 12 + (Int(member[10]) | Int(member[11]) << 8)
        let secondStart = headerLength + Int(index.segments[0].compressedLength)
        member[secondStart + Int(index.segments[1].compressedLength) / 2] ^= 0x55
        try sandbox.write(member, to: "damaged.gz")
        try sandbox.write(member, to: "copy.gz")
        let gzip = try await CLI.shell("gzip -dc damaged.gz > /dev/null", in: sandbox)
        #expect(gzip.status != 0)
        let alone = try await CLI.run(["decompress", "-p", "2", "-c", "damaged.gz"], in: sandbox)
        let several = try await CLI.run(["decompress", "-p", "2", "-k", "damaged.gz", "copy.gz"], in: sandbox)
        for (result, name) in [(alone, "damaged.gz"), (several, "copy.gz")] {
            #expect(result.status == 1, "\(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            let warning = try #require(
                lines.firstIndex { $0.contains("decompress '\(name)': member 1, segment 2 does not match its index") },
                "\(result.stderr)")
            let failure = try #require(lines.lastIndex { $0.contains(name) && !$0.contains("segment") }, "\(result.stderr)")
            #expect(warning < failure, "\(result.stderr)")
        }
        #expect(!sandbox.exists("damaged") && !sandbox.exists("copy"))
        let quiet = try await CLI.run(["decompress", "-q", "-p", "2", "-c", "damaged.gz"], in: sandbox)
        #expect(quiet.status == 1 && !quiet.stderr.contains("segment"), "\(quiet.stderr)")
    }

    /// Truncated inside a segment: exit 1 and the message of a truncated input.
    @Test func aTruncatedIndexedFileFails() async throws {
        let (sandbox, _) = try await Self.indexedFile()
        let member = try #require(sandbox.contents("input.gz"))
        try sandbox.write(Array(member.prefix(member.count * 2 / 3)), to: "short.gz")
        let result = try await CLI.run(["decompress", "-p", "2", "-c", "short.gz"], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr.contains("truncated") || result.stderr.contains("unexpected end"), "\(result.stderr)")
    }

    /// BGZF (`bgzip -@ 2`), two indexed files concatenated with a gzip member between them,
    /// and NUL padding: the same output as `gzip -d`.
    @Test func bgzfAndConcatenatedMembers() async throws {
        let (sandbox, _) = try await Self.indexedFile()
        let result = try await CLI.shell(
            """
            set -e
            command -v bgzip >/dev/null || { echo "bgzip is not installed" >&2; exit 3; }
            bgzip -@ 2 -c input > b.gz
            "$SLUICE" decompress -p 2 -c b.gz | cmp - input
            gzip -c input > g.gz
            cat input.gz g.gz input.gz b.gz > all.gz
            printf '\\0\\0\\0\\0' >> all.gz
            gzip -dc all.gz > expected
            "$SLUICE" decompress -p 2 -c all.gz | cmp - expected
            """, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
    }
}
