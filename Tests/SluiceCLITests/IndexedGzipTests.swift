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
