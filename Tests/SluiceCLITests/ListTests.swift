#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import SluiceCLI
import SluiceTestSupport
import Testing

/// `sluice decompress -l` prints what `gzip -l` prints for the same files, byte for byte, and
/// marks a size the data could exceed by a multiple of 4 GiB.
@Suite(.timeLimit(.minutes(1)), .enabled(if: Tool.gzip != nil, "gzip is not installed"))
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
        let gzip = try await CLI.shell("gzip -l \(names.joined(separator: " ")) > gzip.txt", in: sandbox)
        #expect(gzip.status == 0)
        let result = try await CLI.run(["decompress", "-l"] + names, in: sandbox)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        #expect(result.stdoutText == sandbox.text("gzip.txt"))
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

    // MARK: sizes past 4 GiB

    /// The rule: a size is marked when 1032 bytes for every compressed byte of data could
    /// reach ISIZE + 4 GiB.
    @Test func aSizeIsMarkedWhenTheDataCouldExceedItByFourGiB() {
        let limit = Int64(1) << 32
        func row(compressed: Int64, isize: Int64) -> GzipListing.Row {
            GzipListing.Row(compressed: compressed, uncompressed: isize, overhead: 18, name: "x")
        }
        // 4,161,790 bytes of data decode to at most 4,294,967,280 bytes < 4 GiB: exact.
        #expect(!row(compressed: 4_161_790 + 18, isize: 0).mayExceedISIZE)
        #expect(row(compressed: 4_161_791 + 18, isize: 0).mayExceedISIZE)
        // The larger ISIZE, the later: ISIZE + 4 GiB must be reachable.
        #expect(!row(compressed: 4_161_791 + 18, isize: 100_000).mayExceedISIZE)
        #expect(!row(compressed: (limit + 100_000) / 1032 + 18, isize: 100_000).mayExceedISIZE)
        #expect(row(compressed: (limit + 100_000) / 1032 + 1 + 18, isize: 100_000).mayExceedISIZE)
        // Compressed sizes near the end of Int64 do not overflow the rule.
        #expect(row(compressed: .max, isize: 12).mayExceedISIZE)
        #expect(!row(compressed: 20, isize: 0).mayExceedISIZE)
    }

    /// A member whose trailer says ISIZE 5 after 4.2 MB of data (as 4 GiB + 5 bytes of zeros
    /// would compress to about that) is listed with ISIZE 5 marked, and the note. Nothing is
    /// decoded, so the data need not be deflate. (gzip 1.12 and later decode to count, and
    /// would print the size that decoding gives.)
    @Test func aSizeThatMayHaveWrappedIsMarked() async throws {
        let sandbox = try Sandbox()
        let header: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3]
        let trailer: [UInt8] = [0, 0, 0, 0, 5, 0, 0, 0]
        try sandbox.write(header + [UInt8](repeating: 0, count: 4_200_000) + trailer, to: "big.gz")
        let result = try await CLI.run(["decompress", "-l", "big.gz"], in: sandbox)
        #expect(result.status == 0)
        let row = String(repeating: " ", count: 12) + "4200018 " + String(repeating: " ", count: 17) + "5* -83999900.0% big"
        #expect(result.stdoutText == GzipListing.heading + "\n" + row + "\n")
        #expect(result.stderr == "sluice: \(GzipListing.note)\n")
        // -q leaves the note out.
        let quiet = try await CLI.run(["decompress", "-lq", "big.gz"], in: sandbox)
        #expect(quiet.stderr.isEmpty && quiet.stdout == result.stdout)
    }
}
