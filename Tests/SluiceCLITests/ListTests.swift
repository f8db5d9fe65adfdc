#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import SluiceCLI
import SluiceTestSupport
import Testing

/// `sluice decompress -l` and `-lv` print what gzip 1.12's `gzip -l` and `-lv` print for the same
/// files, byte for byte: each file is decoded, as gzip 1.12 does.
@Suite(.timeLimit(.minutes(3)), .enabled(if: Tool.gzip != nil, "gzip is not installed"))
struct ListTests {
    /// Files made by gzip (with and without a stored name), by sluice, an empty one, one of
    /// two members, and a .tgz.
    static func files(in sandbox: Sandbox) async throws {
        try sandbox.write(mixedData(count: 300_000), to: "mixed")
        try sandbox.write("hello world\n", to: "small")
        try sandbox.write("", to: "empty")
        let made = try await CLI.shell(
            """
            gzip -k mixed && gzip -n -c small > small.gz && gzip -c empty > empty.gz
            cat small.gz mixed.gz > two.gz && cp mixed.gz archive.tgz && "$SLUICE" compress -c mixed > ours.gz
            """, in: sandbox)
        try #require(made.status == 0, "\(made.stderr)")
    }

    @Test(arguments: [
        ["mixed.gz"], ["small.gz"], ["empty.gz"], ["two.gz"], ["archive.tgz"], ["ours.gz"],
        ["mixed.gz", "small.gz", "two.gz"], ["empty.gz", "ours.gz"],
    ])
    func theListingIsGzips(names: [String]) async throws {
        let sandbox = try Sandbox()
        try await Self.files(in: sandbox)
        for flags in ["-l", "-lv"] {
            let gzip = try await CLI.shell("gzip \(flags) \(names.joined(separator: " ")) > gzip.txt", in: sandbox)
            #expect(gzip.status == 0)
            let result = try await CLI.run(["decompress", flags] + names, in: sandbox)
            #expect(result.status == 0)
            #expect(result.stderr.isEmpty)
            #expect(result.stdoutText == sandbox.text("gzip.txt"), "\(flags)")
        }
        let result = try await CLI.run(["decompress", "-l"] + names, in: sandbox)
        // compress -l is decompress -l, as gzip -l needs no -d.
        let viaCompress = try await CLI.run(["compress", "--list"] + names, in: sandbox)
        #expect(viaCompress.stdout == result.stdout)
    }

    /// A file that cannot be listed fails (exit 1) with a message; the others are listed.
    @Test func aFileThatCannotBeListedFailsAndTheOthersAreListed() async throws {
        let sandbox = try Sandbox()
        try await Self.files(in: sandbox)
        try sandbox.write(Array((try #require(sandbox.contents("mixed.gz"))).prefix(10)), to: "cut.gz")
        let result = try await CLI.run(["decompress", "-l", "missing.gz", "mixed", "cut.gz", "small.gz"], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderrLines == [
            "sluice: cannot open 'missing.gz': No such file or directory",
            "sluice: cannot list 'mixed': not in gzip format at byte 0",
            "sluice: cannot list 'cut.gz': unexpected end of file at byte 10",
        ], "\(result.stderr)")
        // gzip lists the same file, and its totals: several operands were given. (gzip stops at
        // the truncated file, as at any unexpected end of file; sluice goes on, as with any
        // failed operand.)
        let gzip = try await CLI.shell("gzip -l missing.gz mixed small.gz", in: sandbox)
        #expect(gzip.status == 1)
        #expect(result.stdoutText == gzip.stdoutText)
    }

    /// Standard input is read to its end; its output name is `-`.
    @Test func standardInputIsListedAsADash() async throws {
        let sandbox = try Sandbox()
        try await Self.files(in: sandbox)
        let piped = try await CLI.shell(#"cat mixed.gz | "$SLUICE" decompress -l"#, in: sandbox)
        let file = try await CLI.run(["decompress", "-l", "mixed.gz"], in: sandbox)
        #expect(piped.status == 0, "\(piped.stderr)")
        let expected = file.stdoutText.replacingOccurrences(of: " mixed\n", with: " -\n")
        #expect(piped.stdoutText == expected)
    }

    /// Options that write cannot go with -l.
    @Test(arguments: [["-c"], ["-o", "out"], ["-t"], ["--rm"]])
    func listingWritesNothing(option: [String]) async throws {
        let sandbox = try Sandbox()
        try await Self.files(in: sandbox)
        let result = try await CLI.run(["decompress", "-l"] + option + ["mixed.gz"], in: sandbox)
        #expect(result.status == 64)
        #expect(result.stderr.contains("--list only lists"), "\(result.stderr)")
    }

    /// C44: two members of one byte each; gzip's ratio for several members leaves no header
    /// out (`-4100.0%`), and the last member's size and CRC-32 are listed.
    @Test func severalMembersAreListedAsGzipListsThem() async throws {
        let sandbox = try Sandbox()
        let made = try await CLI.shell("printf a | gzip -n > m.gz && printf b | gzip -n >> m.gz", in: sandbox)
        try #require(made.status == 0)
        for flags in ["-l", "-lv"] {
            let gzip = try await CLI.shell("gzip \(flags) m.gz", in: sandbox)
            let result = try await CLI.run(["decompress", flags, "m.gz"], in: sandbox)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdoutText == gzip.stdoutText)
        }
        let verbose = try await CLI.run(["decompress", "-lv", "m.gz"], in: sandbox)
        #expect(verbose.stdoutText.contains("defla 71beeff9 "), "\(verbose.stdoutText)")
        #expect(verbose.stdoutText.hasSuffix("                 42                   1 -4100.0% m\n"), "\(verbose.stdoutText)")
    }

    /// The listing decodes: a file whose data does not match its trailer fails, as `gzip -t`
    /// would find; bytes after the last member are a warning (exit 2) and the row is listed.
    @Test func theListingDecodesAndChecksEveryMember() async throws {
        let sandbox = try Sandbox()
        try await Self.files(in: sandbox)
        var bytes = try #require(sandbox.contents("mixed.gz"))
        bytes[bytes.count - 6] ^= 0xFF  // the stored CRC-32
        try sandbox.write(bytes, to: "bad.gz")
        let bad = try await CLI.run(["decompress", "-l", "bad.gz", "small.gz"], in: sandbox)
        #expect(bad.status == 1)
        #expect(bad.stderrLines.count == 1 && bad.stderrLines[0].hasPrefix("sluice: cannot list 'bad.gz': "), "\(bad.stderr)")
        #expect(bad.stdoutText.contains(" small\n"))
        try sandbox.write(try #require(sandbox.contents("small.gz")) + Array("junk".utf8), to: "junk.gz")
        let junk = try await CLI.run(["decompress", "-l", "junk.gz"], in: sandbox)
        #expect(junk.status == 2, "\(junk.stderr)")
        #expect(junk.stdoutText.hasSuffix(" junk\n"))
        // C57 (e): the name quoted as in every other message.
        #expect(junk.stderr.hasPrefix("sluice: list 'junk.gz': decompression OK, trailing garbage ignored"), "\(junk.stderr)")
    }
}
