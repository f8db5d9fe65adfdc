#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// Cases C01–C07 of the cases README at the command line, each with its exact outcome.
@Suite(.timeLimit(.minutes(4)))
struct GzipCasesTests {
    static let hello = "printf 'hello\\n' | gzip -n > a.gz"

    // MARK: C01 Concatenated members

    @Test(arguments: roundTripChunkSizes)
    func twoMembersDecodeToBoth(chunkSize: String) async throws {
        let sandbox = try Sandbox()
        let made = try await CLI.shell(
            "\(Self.hello); printf 'world\\n' | gzip -n > b.gz; cat a.gz b.gz > two.gz", in: sandbox)
        try #require(made.status == 0)
        let result = try await CLI.run(["decompress", "--chunk-size", chunkSize, "two.gz"], in: sandbox)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        #expect(sandbox.text("two") == "hello\nworld\n")
        #expect(sandbox.leftovers().isEmpty)
    }

    @Test func twoThousandOneLineMembersDecodeAtEveryChunkSize() async throws {
        let sandbox = try Sandbox()
        let made = try await CLI.shell(
            #"for i in $(seq 2000); do echo "line $i" | gzip -n; done > many.gz && gzip -dc many.gz > expected"#,
            in: sandbox)
        try #require(made.status == 0)
        let expected = try #require(sandbox.contents("expected"))
        #expect(expected == Array((1...2000).map { "line \($0)\n" }.joined().utf8))
        for chunkSize in roundTripChunkSizes {
            let result = try await CLI.run(["decompress", "--chunk-size", chunkSize, "-c", "many.gz"], in: sandbox)
            #expect(result.status == 0, "--chunk-size \(chunkSize)")
            #expect(result.stdout == expected, "--chunk-size \(chunkSize)")
        }
        let toFile = try await CLI.run(["decompress", "--chunk-size", "7", "many.gz"], in: sandbox)
        #expect(toFile.status == 0)
        #expect(sandbox.contents("many") == expected)
    }

    // MARK: C02 Bytes after the last member

    @Test func nulPaddingIsAcceptedSilently() async throws {
        let sandbox = try Sandbox()
        let made = try await CLI.shell("\(Self.hello); head -c 512 /dev/zero >> a.gz", in: sandbox)
        try #require(made.status == 0)
        let result = try await CLI.run(["decompress", "a.gz"], in: sandbox)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        #expect(sandbox.text("a") == "hello\n")
    }

    @Test func trailingGarbageKeepsTheOutputWithAWarningAndExit2() async throws {
        let sandbox = try Sandbox()
        let made = try await CLI.shell("\(Self.hello); printf 'GARBAGE!!' >> a.gz", in: sandbox)
        try #require(made.status == 0)
        let result = try await CLI.run(["decompress", "a.gz"], in: sandbox)
        #expect(result.status == 2)
        #expect(result.stderr.contains("trailing garbage"), "\(result.stderr)")
        #expect(result.stderr.contains("a.gz"))
        #expect(sandbox.text("a") == "hello\n")
        #expect(sandbox.leftovers().isEmpty)

        // -q silences the warning, not the status.
        let quiet = try await CLI.run(["decompress", "-q", "-c", "a.gz"], in: sandbox)
        #expect(quiet.status == 2)
        #expect(quiet.stderr.isEmpty)
        #expect(quiet.stdoutText == "hello\n")
    }

    @Test func aLoneMagicByteAfterTheMemberIsATruncatedMember() async throws {
        let sandbox = try Sandbox()
        let made = try await CLI.shell("\(Self.hello); printf '\\037' >> a.gz", in: sandbox)
        try #require(made.status == 0)
        #expect(sandbox.contents("a.gz")?.last == 0x1F)
        let result = try await CLI.run(["decompress", "a.gz"], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr.contains("unexpected end of file"), "\(result.stderr)")
        expectNotCommitted("a", in: sandbox)
    }

    // MARK: C03 Empty things

    @Test func emptyFileIsNotGzipAndCreatesNothing() async throws {
        let sandbox = try Sandbox()
        try sandbox.write([], to: "empty.gz")
        let result = try await CLI.run(["decompress", "empty.gz"], in: sandbox)
        #expect(result.status == 1)
        #expect(
            result.stderr.contains("not in gzip format") || result.stderr.contains("unexpected end of file"),
            "\(result.stderr)")
        expectNotCommitted("empty", in: sandbox)
        #expect(sandbox.listing() == ["empty.gz"])
    }

    @Test func emptyFileCompressesToA20ByteMemberAndBack() async throws {
        let sandbox = try Sandbox()
        try sandbox.write([], to: "empty")
        let compressed = try await CLI.run(["compress", "empty"], in: sandbox)
        #expect(compressed.status == 0)
        #expect(sandbox.contents("empty.gz")?.count == 20)
        let check = try await CLI.shell("gzip -t empty.gz && gzip -dc empty.gz | wc -c", in: sandbox)
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines) == "0")

        unlink(sandbox.path("empty"))
        let decompressed = try await CLI.run(["decompress", "empty.gz"], in: sandbox)
        #expect(decompressed.status == 0)
        #expect(decompressed.stderr.isEmpty)
        #expect(sandbox.contents("empty") == [])
    }

    @Test func onlyTheMagicBytesIsAnError() async throws {
        let sandbox = try Sandbox()
        try sandbox.write([0x1F, 0x8B], to: "magic.gz")
        try sandbox.write("OLD", to: "magic")
        let result = try await CLI.run(["decompress", "--force", "magic.gz"], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr.contains("unexpected end of file"), "\(result.stderr)")
        expectNotCommitted("magic", old: Array("OLD".utf8), in: sandbox)
    }

    // MARK: C04 Truncation

    enum Cut: String, CaseIterable, Sendable {
        case half, beforeTrailer, threeShort, headerOnly

        func length(of count: Int) -> Int {
            switch self {
            case .half: return count / 2
            case .beforeTrailer: return count - 8
            case .threeShort: return count - 3
            case .headerOnly: return 10
            }
        }
    }

    @Test(arguments: Cut.allCases, [false, true])
    func truncatedFileFailsAndCommitsNothing(cut: Cut, destinationExists: Bool) async throws {
        let sandbox = try Sandbox()
        try await writeWithGzip(mixedData(count: 540_000), to: "p", in: sandbox)
        unlink(sandbox.path("p"))
        let whole = try #require(sandbox.contents("p.gz"))
        #expect((240_000...300_000).contains(whole.count), "p.gz is \(whole.count) bytes, not about 270 KB")
        try sandbox.write(Array(whole.prefix(cut.length(of: whole.count))), to: "p.gz")
        let old: [UInt8]? = destinationExists ? Array("OLD".utf8) : nil
        if let old { try sandbox.write(old, to: "p") }
        let result = try await CLI.run(["decompress", "--force", "p.gz"], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr.contains("unexpected end of file"), "\(result.stderr)")
        #expect(result.stderr.contains("'p.gz'"))
        expectNotCommitted("p", old: old, in: sandbox)

        // The same through standard input to a named output.
        let piped = try await CLI.run(["decompress", "--force", "-o", "q", "-"], in: sandbox, stdin: .file(sandbox.path("p.gz")))
        #expect(piped.status == 1)
        #expect(piped.stderr.contains("unexpected end of file"))
        expectNotCommitted("q", in: sandbox)
    }

    // MARK: C05 Corrupt trailer

    @Test(arguments: [(-8, UInt8(0xFF), "CRC-32 mismatch"), (-1, UInt8(0x01), "length mismatch")])
    func corruptTrailerKeepsTheOldDestination(position: Int, mask: UInt8, message: String) async throws {
        let sandbox = try Sandbox()
        try await writeWithGzip(mixedData(count: 540_000), to: "p", in: sandbox)
        var bytes = try #require(sandbox.contents("p.gz"))
        bytes[bytes.count + position] ^= mask
        try sandbox.write(bytes, to: "p.gz")
        try sandbox.write("OLD", to: "p")
        let result = try await CLI.run(["decompress", "--force", "p.gz"], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr.contains(message), "\(result.stderr)")
        expectNotCommitted("p", old: Array("OLD".utf8), in: sandbox)

        let absent = try await CLI.run(["decompress", "-o", "fresh", "p.gz"], in: sandbox)
        #expect(absent.status == 1)
        expectNotCommitted("fresh", in: sandbox)
    }

    // MARK: C06 Optional header fields

    @Test func memberWithEveryOptionalHeaderFieldDecodes() async throws {
        let sandbox = try Sandbox()
        let deflate = try await GzipBytes.rawDeflate(of: GzipBytes.headerFieldsPayload, in: sandbox)
        try sandbox.write(GzipBytes.headerFieldsMember(deflate: deflate), to: "fields.gz")
        let reference = try await CLI.shell("gzip -t fields.gz", in: sandbox)
        try #require(reference.status == 0, "gzip rejects the member built for the test: \(reference.stderr)")

        let result = try await CLI.run(["decompress", "fields.gz"], in: sandbox)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        #expect(sandbox.contents("fields") == GzipBytes.headerFieldsPayload)
        // FNAME (name.txt) is never used as the output path.
        #expect(sandbox.listing() == ["fields", "fields.gz"])
    }

    @Test func changedCommentIsAHeaderCRCError() async throws {
        let sandbox = try Sandbox()
        let deflate = try await GzipBytes.rawDeflate(of: GzipBytes.headerFieldsPayload, in: sandbox)
        try sandbox.write(GzipBytes.headerFieldsMember(deflate: deflate, comment: "a commenT"), to: "fields.gz")
        let result = try await CLI.run(["decompress", "fields.gz"], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr.contains("header CRC mismatch"), "\(result.stderr)")
        expectNotCommitted("fields", in: sandbox)
        #expect(!sandbox.exists("name.txt"))
    }

    /// `mkhdr.py` of the cases folder, verbatim: the member as the case describes it.
    static let mkhdr = #"""
        import struct
        import sys
        import zlib

        payload = b"header-flags test payload\n" * 100
        deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
        body = deflater.compress(payload) + deflater.flush()
        extra = b"AB" + struct.pack("<H", 2) + b"xy"
        flags = 0x02 | 0x04 | 0x08 | 0x10  # FHCRC | FEXTRA | FNAME | FCOMMENT
        header = b"\x1f\x8b\x08" + bytes([flags]) + struct.pack("<I", 0) + b"\x00\xff"
        header += struct.pack("<H", len(extra)) + extra + b"name.txt\x00" + b"a comment\x00"
        header += struct.pack("<H", zlib.crc32(header) & 0xFFFF)
        trailer = struct.pack("<II", zlib.crc32(payload) & 0xFFFFFFFF, len(payload) & 0xFFFFFFFF)
        sys.stdout.buffer.write(header + body + trailer)
        """#

    @Test(.enabled(if: Tool.python3 != nil, "python3 is not installed: the Swift-built member covers C06"))
    func mkhdrMemberDecodesAndItsChangedCommentFails() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(Self.mkhdr, to: "mkhdr.py")
        let made = try await CLI.shell("python3 mkhdr.py > h.gz", in: sandbox)
        try #require(made.status == 0, "\(made.stderr)")
        let result = try await CLI.run(["decompress", "h.gz"], in: sandbox)
        #expect(result.status == 0)
        #expect(sandbox.contents("h") == GzipBytes.headerFieldsPayload)
        #expect(!sandbox.exists("name.txt"))

        var bytes = try #require(sandbox.contents("h.gz"))
        let comment = Array("a comment".utf8)
        let start = try #require((0...(bytes.count - comment.count)).first { Array(bytes[$0..<($0 + comment.count)]) == comment })
        bytes[start + 2] ^= 0x01
        try sandbox.write(bytes, to: "bad.gz")
        let bad = try await CLI.run(["decompress", "bad.gz"], in: sandbox)
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("header CRC mismatch"), "\(bad.stderr)")
        expectNotCommitted("bad", in: sandbox)
    }

    // MARK: C07 Not gzip

    static let notGzipKinds = ["zlib", "zlib with a 512-byte window", "raw deflate"]

    @Test(arguments: notGzipKinds)
    func otherDeflateWrappersAreNotGzip(kind: String) async throws {
        let sandbox = try Sandbox()
        let data = [UInt8](repeating: UInt8(ascii: "x"), count: 1000)
        let deflate = try await GzipBytes.rawDeflate(of: data, level: 6, in: sandbox)
        let bytes: [UInt8] = switch kind {
        case "zlib": GzipBytes.zlibStream(data, header: [0x78, 0x9C], deflate: deflate)
        case "raw deflate": deflate
        default: GzipBytes.zlibStream(data, header: [0x18, 0x95], deflate: deflate)
        }
        try sandbox.write(bytes, to: "z.gz")
        let result = try await CLI.run(["decompress", "z.gz"], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr.contains("not in gzip format"), "\(result.stderr)")
        expectNotCommitted("z", in: sandbox)
    }

    @Test(.enabled(if: Tool.python3 != nil, "python3 is not installed: the Swift-built streams cover C07"))
    func pythonZlibStreamsAreNotGzip() async throws {
        let sandbox = try Sandbox()
        let made = try await CLI.shell(#"""
            python3 -c 'import zlib,sys; sys.stdout.buffer.write(zlib.compress(b"x"*1000))' > zlib.gz &&
            python3 -c 'import zlib,sys; c=zlib.compressobj(6, zlib.DEFLATED, 9); sys.stdout.buffer.write(c.compress(b"x"*1000)+c.flush())' > small-window.gz &&
            python3 -c 'import zlib,sys; c=zlib.compressobj(6, zlib.DEFLATED, -15); sys.stdout.buffer.write(c.compress(b"x"*1000)+c.flush())' > raw.gz
            """#, in: sandbox)
        try #require(made.status == 0, "\(made.stderr)")
        #expect(sandbox.contents("small-window.gz")?.prefix(2) == [0x18, 0x95])
        for name in ["zlib", "small-window", "raw"] {
            let result = try await CLI.run(["decompress", "\(name).gz"], in: sandbox)
            #expect(result.status == 1, "\(name)")
            #expect(result.stderr.contains("not in gzip format"), "\(name): \(result.stderr)")
            expectNotCommitted(name, in: sandbox)
        }
    }

    @Test func methodSevenIsAnUnknownMethod() async throws {
        let sandbox = try Sandbox()
        let made = try await CLI.shell(Self.hello, in: sandbox)
        try #require(made.status == 0)
        var bytes = try #require(sandbox.contents("a.gz"))
        bytes[2] = 7
        try sandbox.write(bytes, to: "a.gz")
        try sandbox.write("OLD", to: "a")
        let result = try await CLI.run(["decompress", "--force", "a.gz"], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr.contains("unknown method"), "\(result.stderr)")
        expectNotCommitted("a", old: Array("OLD".utf8), in: sandbox)
    }
}
