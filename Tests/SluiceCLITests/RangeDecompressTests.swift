import Testing
@testable import Sluice
import SluiceCLI
import SluiceTestSupport

/// `sluice decompress --range START:END`: the bytes `gzip -dc | dd` would give, read at random
/// where sluice's index allows, decoded from the start elsewhere (said with `-v`).
@Suite(.timeLimit(.minutes(3)))
struct RangeDecompressTests {
    static func slice(_ data: [UInt8], _ lower: Int, _ upper: Int) -> [UInt8] {
        Array(data[min(lower, data.count)..<min(upper, data.count)])
    }

    @Test(arguments: ["1", "2"])
    func rangesOfAnIndexedFile(threads: String) async throws {
        let (sandbox, data) = try await ParallelDecompressTests.indexedFile()
        let cases: [(String, [UInt8])] = [
            ("100:4196", Self.slice(data, 100, 4196)),
            ("1000000:5000000", Self.slice(data, 1_000_000, 5_000_000)),
            ("2M:", Self.slice(data, 2 << 20, data.count)),
            (":1K", Self.slice(data, 0, 1024)),
            (":", data),
            ("5M:1G", Self.slice(data, 5 << 20, data.count)),
            ("1G:2G", []),
            ("7:7", []),
        ]
        for (range, expected) in cases {
            let result = try await CLI.run(["decompress", "-p", threads, "--range", range, "input.gz"], in: sandbox)
            #expect(result.status == 0, "\(range): \(result.stderr)")
            #expect(result.stdout == expected, "\(range)")
            #expect(result.stderr.isEmpty, "\(range): \(result.stderr)")
        }
        #expect(sandbox.contents("input") == data, "the source's name is not written: the range goes to standard output")
    }

    /// `-o` writes the range to a file; a file of gzip's own (no index) gives the same bytes,
    /// and `-v` says it was decoded from the start.
    @Test func aFileAndAFileWithoutAnIndex() async throws {
        let (sandbox, data) = try await ParallelDecompressTests.indexedFile()
        let result = try await CLI.shell(
            """
            set -e
            "$SLUICE" decompress --range 3000000:3100000 -o part input.gz
            gzip -c input > plain.gz
            "$SLUICE" decompress -v --range 3000000:3100000 plain.gz > plain-part 2> verbose
            gzip -dc plain.gz | tail -c +3000001 | head -c 100000 | cmp - part
            cmp part plain-part
            """, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.contents("part") == Self.slice(data, 3_000_000, 3_100_000))
        #expect(sandbox.text("verbose")?.contains("no index to start the range from: decoding from the start") == true)
    }

    /// Two indexed files and one of gzip's concatenated: the range's bytes, as `gzip -dc` cut.
    @Test func concatenatedFiles() async throws {
        let (sandbox, data) = try await ParallelDecompressTests.indexedFile()
        let result = try await CLI.shell(
            """
            set -e
            gzip -c input > g.gz
            cat input.gz input.gz g.gz input.gz > all.gz
            gzip -dc all.gz > all
            for range in 5000000:6000000 10000000:16000000 17000000:; do
              start=${range%%:*} end=${range#*:}
              if [ -z "$end" ]; then tail -c +$((start + 1)) all > expected; else tail -c +$((start + 1)) all | head -c $((end - start)) > expected; fi
              "$SLUICE" decompress -p 2 --range $range all.gz | cmp - expected
            done
            """, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(data.count * 4 > 17_000_000)
    }

    /// An index whose CRC-32 of a segment was altered: a warning naming it, exit 2, and the
    /// right bytes (decoded from the member's start).
    @Test func anAlteredIndexGivesAWarningAndTheRightBytes() async throws {
        let (sandbox, data) = try await ParallelDecompressTests.indexedFile()
        var member = try #require(sandbox.contents("input.gz"))
        member[16 + GzipIndex.fixedLength + 8 + 4] ^= 1  // the second segment's CRC-32
        try sandbox.write(member, to: "altered.gz")
        let result = try await CLI.run(["decompress", "-p", "2", "--range", "3M:4M", "altered.gz"], in: sandbox)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stdout == Self.slice(data, 3 << 20, 4 << 20))
        #expect(result.stderr.contains("segment 2 does not match its index"), "\(result.stderr)")
    }

    /// A bit flipped in a segment's data (random bytes: stored, so it inflates): the warning
    /// that names the segment, then the member decoded from its start fails its CRC-32: exit
    /// 1, both messages, and `-o`'s file is not created.
    @Test func aFlippedBitInASegmentIsAnError() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(pattern(count: (5 << 20) + 99, seed: 41), to: "noise")
        #expect(try await CLI.run(["compress", "noise"], in: sandbox).status == 0)
        var member = try #require(sandbox.contents("noise.gz"))
        let index = try #require(IndexedGzipTests.index(of: member))
        guard case .parsed(let headerLength, _, _, _) = ParallelGzipDecoder.parseHeader(member) else {
            Issue.record("no header")
            return
        }
        member[headerLength + Int(index.segments[0].compressedLength) + 1000] ^= 0x10
        try sandbox.write(member, to: "flipped.gz")
        let result = try await CLI.run(["decompress", "-p", "2", "--range", "2M:3M", "-o", "part", "flipped.gz"], in: sandbox)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("segment 2 does not match its index"), "\(result.stderr)")
        #expect(result.stderr.contains("CRC-32 mismatch"), "\(result.stderr)")
        #expect(!sandbox.exists("part"))
    }

    /// `-f --range … -o` naming the source itself (or another name of it): refused, the
    /// source kept.
    @Test func theSourceAsItsOwnDestination() async throws {
        let (sandbox, _) = try await ParallelDecompressTests.indexedFile()
        let original = try #require(sandbox.contents("input.gz"))
        let result = try await CLI.shell(
            """
            ln input.gz other-name.gz
            "$SLUICE" decompress -f --range 0:1M -o input.gz input.gz; echo "status $?"
            "$SLUICE" decompress -f --range 0:1M -o other-name.gz input.gz; echo "status $?"
            """, in: sandbox)
        #expect(result.stdout == Array("status 1\nstatus 1\n".utf8), "\(result.stderr)")
        #expect(sandbox.contents("input.gz") == original)
    }

    /// What `--range` cannot go with, and ranges that do not parse: usage errors (exit 64).
    @Test func refusals() async throws {
        let (sandbox, _) = try await ParallelDecompressTests.indexedFile()
        let refused: [([String], String)] = [
            (["--range", "0:10", "input.gz", "input.gz"], "several sources"),
            (["--range", "0:10", "--rm", "input.gz"], "--rm"),
            (["--range", "0:10", "--verify", "-o", "x", "input.gz"], "--verify"),
            (["--range", "0:10", "--max-output", "1M", "input.gz"], "--max-output"),
            // It would test only the range, not the file.
            (["--range", "0:10", "-t", "input.gz"], "--test"),
            (["--range", "0:10", "-"], "standard input"),
            (["--range", "10", "input.gz"], "invalid range"),
            (["--range", "10:5", "input.gz"], "ends before it starts"),
            (["--range", "a:5", "input.gz"], "invalid size"),
        ]
        for (arguments, message) in refused {
            let result = try await CLI.run(["decompress"] + arguments, in: sandbox)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        let notGzip = try await CLI.run(["decompress", "--range", "0:10", "input"], in: sandbox)
        #expect(notGzip.status == 1 && notGzip.stderr.contains("not in gzip format"), "\(notGzip.stderr)")
    }

    /// A FIFO, a character device: a range is read at offsets, so refused with that reason at
    /// once (the FIFO without a writer: not waited for), nothing written.
    @Test func aFileThatCannotBeReadAtOffsets() async throws {
        let (sandbox, _) = try await ParallelDecompressTests.indexedFile()
        let result = try await CLI.shell(
            """
            mkfifo pipe.gz
            "$SLUICE" decompress --range 0:10 -o part pipe.gz; echo "status $?"
            "$SLUICE" decompress --range 0:10 /dev/zero; echo "status $?"
            """, in: sandbox)
        #expect(result.stdout == Array("status 1\nstatus 1\n".utf8), "\(result.stderr)")
        #expect(result.stderr.contains("cannot read 'pipe.gz': not a regular file: a range is read at offsets"), "\(result.stderr)")
        #expect(result.stderr.contains("cannot read '/dev/zero': not a regular file"), "\(result.stderr)")
        #expect(!sandbox.exists("part"))
    }

    /// `-v` counts what was written and names the range: the bytes the copy took are the
    /// range's decoded bytes, not bytes read from the file.
    @Test func verboseNamesTheRange() async throws {
        let (sandbox, _) = try await ParallelDecompressTests.indexedFile()
        let result = try await CLI.run(["decompress", "-v", "--range", "1000:1100", "input.gz"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.count == 100)
        #expect(
            result.stderr.contains("decompress 'input.gz' to standard output: 100 bytes written, the range 1000:1100 of its data"),
            "\(result.stderr)")
        #expect(!result.stderr.contains("bytes read"), "\(result.stderr)")
    }
}
