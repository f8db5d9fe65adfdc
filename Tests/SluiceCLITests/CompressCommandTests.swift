#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// `sluice compress` output is what the real `gzip -d` decodes, at every level and chunk size.
@Suite(.timeLimit(.minutes(4)))
struct CompressRoundTripTests {
    static let levels: [[String]] = [["-1"], ["-6"], ["-9"], ["--level", "9"]]

    /// XFL (RFC 1952 §2.3.1) as zlib writes it: 4 for the fastest level, 2 for the best, else 0.
    static func extraFlags(_ level: [String]) -> UInt8 {
        switch level.last {
        case "-1": return 4
        case "-9", "9": return 2
        default: return 0
        }
    }

    @Test(arguments: levels, roundTripChunkSizes)
    func gzipDecodesWhatSluiceCompresses(level: [String], chunkSize: String) async throws {
        let sandbox = try Sandbox()
        let data = mixedData(count: roundTripInputSize(chunkSize: chunkSize))
        try sandbox.write(data, to: "input")
        let result = try await CLI.run(["compress"] + level + ["--chunk-size", chunkSize, "-c", "input"], in: sandbox)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        let member = result.stdout
        try #require(member.count >= 20)
        // No file name and MTIME 0 (as `gzip -n`), and the level in XFL.
        #expect(Array(member[0..<4]) == [0x1F, 0x8B, 0x08, 0x00])
        #expect(Array(member[4..<8]) == [0, 0, 0, 0])
        #expect(member[8] == Self.extraFlags(level))
        #expect(member.count < data.count)
        try sandbox.write(member, to: "input.gz")
        let decoded = try await CLI.shell("gzip -dc input.gz > decoded", in: sandbox)
        #expect(decoded.status == 0, "gzip -d: \(decoded.stderr)")
        #expect(sandbox.contents("decoded") == data)
    }

    @Test func levelsChangeTheOutputAndLevelNineIsSpelledTwoWays() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(mixedData(count: 500_000), to: "input")
        var sizes: [String: Int] = [:]
        var outputs: [String: [UInt8]] = [:]
        for level in [["-1"], ["-6"], ["-9"], ["--level", "9"], ["--level=1"], []] {
            let result = try await CLI.run(["compress"] + level + ["-c", "input"], in: sandbox)
            #expect(result.status == 0)
            let name = level.joined(separator: " ")
            sizes[name] = result.stdout.count
            outputs[name] = result.stdout
        }
        #expect(outputs["--level 9"] == outputs["-9"])
        #expect(outputs["--level=1"] == outputs["-1"])
        #expect(outputs[""] == outputs["-6"], "the default level is 6")
        #expect(sizes["-1"]! > sizes["-9"]!)
        #expect(outputs["-1"] != outputs["-6"])
    }

    @Test(arguments: [["-0"], ["--level", "10"], ["--level", "0"], ["--level", "x"]])
    func invalidLevelIsBadUsage(level: [String]) async throws {
        let sandbox = try Sandbox()
        try sandbox.write("data\n", to: "input")
        let result = try await CLI.run(["compress"] + level + ["input"], in: sandbox)
        #expect(result.status == 64)
        #expect(sandbox.listing() == ["input"])
    }
}

/// Names, operands and the options of `sluice compress`.
@Suite(.timeLimit(.minutes(3)))
struct CompressCommandTests {
    @Test func compressWritesDotGzAndKeepsTheSource() async throws {
        let sandbox = try Sandbox()
        let data = mixedData(count: 200_000)
        try sandbox.write(data, to: "x.bin")
        let result = try await CLI.run(["compress", "x.bin"], in: sandbox)
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.isEmpty)
        #expect(sandbox.contents("x.bin") == data)
        #expect(sandbox.listing() == ["x.bin", "x.bin.gz"])
        let decoded = try await CLI.shell("gzip -dc x.bin.gz > decoded && gzip -t x.bin.gz", in: sandbox)
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(sandbox.contents("decoded") == data)
    }

    @Test func decompressRestoresTheNameWithoutSuffix() async throws {
        let sandbox = try Sandbox()
        let data = mixedData(count: 200_000)
        try sandbox.write(data, to: "x.bin")
        #expect(try await CLI.run(["compress", "x.bin"], in: sandbox).status == 0)
        unlink(sandbox.path("x.bin"))
        let result = try await CLI.run(["decompress", "x.bin.gz"], in: sandbox)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        #expect(sandbox.contents("x.bin") == data)
        #expect(sandbox.listing() == ["x.bin", "x.bin.gz"])
    }

    @Test func outputOptionNamesTheDestinationBothWays() async throws {
        let sandbox = try Sandbox()
        let data = mixedData(count: 100_000)
        try sandbox.write(data, to: "input")
        #expect(try await CLI.run(["compress", "-o", "packed", "input"], in: sandbox).status == 0)
        #expect(try await CLI.run(["decompress", "--output=unpacked", "packed"], in: sandbox).status == 0)
        #expect(sandbox.contents("unpacked") == data)
        #expect(sandbox.listing() == ["input", "packed", "unpacked"])
        // The same bytes as to standard output: the output is reproducible.
        let piped = try await CLI.run(["compress", "-c", "input"], in: sandbox)
        #expect(piped.stdout == sandbox.contents("packed"))
    }

    @Test func stdoutOptionWritesOneMemberPerSourceAndNoFile() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("first\n", to: "a")
        try sandbox.write("second\n", to: "b")
        let result = try await CLI.run(["compress", "-c", "a", "b"], in: sandbox)
        #expect(result.status == 0)
        #expect(sandbox.listing() == ["a", "b"])
        try sandbox.write(result.stdout, to: "both.gz")
        let decoded = try await CLI.shell("gzip -dc both.gz", in: sandbox)
        #expect(decoded.stdoutText == "first\nsecond\n")
        let ours = try await CLI.run(["decompress", "--stdout", "both.gz"], in: sandbox)
        #expect(ours.status == 0)
        #expect(ours.stdoutText == "first\nsecond\n")
    }

    @Test(arguments: [["-"], []])
    func standardInputGoesToStandardOutput(operands: [String]) async throws {
        let sandbox = try Sandbox()
        let data = mixedData(count: 300_000)
        try sandbox.write(data, to: "input")
        let compressed = try await CLI.run(["compress"] + operands, in: sandbox, stdin: .file(sandbox.path("input")))
        #expect(compressed.status == 0)
        #expect(compressed.stderr.isEmpty)
        try sandbox.write(compressed.stdout, to: "packed.gz")
        let decoded = try await CLI.shell("gzip -dc packed.gz > decoded", in: sandbox)
        #expect(decoded.status == 0)
        #expect(sandbox.contents("decoded") == data)
        let back = try await CLI.run(["decompress"] + operands, in: sandbox, stdin: .file(sandbox.path("packed.gz")))
        #expect(back.status == 0)
        #expect(back.stdout == data)
        #expect(sandbox.listing() == ["decoded", "input", "packed.gz"])
    }

    @Test func standardInputWithOutputOptionWritesAFile() async throws {
        let sandbox = try Sandbox()
        let data = mixedData(count: 50_000)
        try sandbox.write(data, to: "input")
        let result = try await CLI.run(["compress", "-o", "packed.gz", "-"], in: sandbox, stdin: .file(sandbox.path("input")))
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
        let decoded = try await CLI.shell("gzip -dc packed.gz > decoded", in: sandbox)
        #expect(decoded.status == 0)
        #expect(sandbox.contents("decoded") == data)
    }

    @Test func sourceAlreadyEndingInGzIsLeftUnchangedWithAWarning() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("not really gzip", to: "a.gz")
        let result = try await CLI.run(["compress", "a.gz"], in: sandbox)
        #expect(result.status == 2)
        #expect(result.stderr.contains("'a.gz'"))
        #expect(result.stderr.contains("already has the .gz suffix"), "\(result.stderr)")
        #expect(sandbox.text("a.gz") == "not really gzip")
        #expect(sandbox.listing() == ["a.gz"])
    }

    @Test func suffixWarningDoesNotStopTheOtherSources() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("zipped?", to: "a.gz")
        try sandbox.write("plain\n", to: "b")
        let result = try await CLI.run(["compress", "a.gz", "b"], in: sandbox)
        #expect(result.status == 2)
        #expect(sandbox.listing() == ["a.gz", "b", "b.gz"])
    }

    @Test func existingDestinationIsRefusedWithoutForce() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("data\n", to: "x")
        try sandbox.write("OLD", to: "x.gz")
        let refused = try await CLI.run(["compress", "x"], in: sandbox)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("'x.gz'"))
        #expect(refused.stderr.contains("--force"))
        expectNotCommitted("x.gz", old: Array("OLD".utf8), in: sandbox)
        let forced = try await CLI.run(["compress", "--force", "x"], in: sandbox)
        #expect(forced.status == 0)
        let decoded = try await CLI.shell("gzip -dc x.gz", in: sandbox)
        #expect(decoded.stdoutText == "data\n")
    }

    /// C11 for compress and decompress: an output onto the source is refused, in the
    /// command's own words, and the source stays intact.
    @Test(arguments: ["compress", "decompress"])
    func outputOntoTheSourceIsRefused(command: String) async throws {
        let sandbox = try Sandbox()
        try await writeWithGzip(mixedData(count: 10_000), to: "x", in: sandbox)
        let source = command == "compress" ? "x" : "x.gz"
        let before = try #require(sandbox.contents(source))
        try sandbox.makeSymbolicLink("link", to: source)
        for output in [source, "link"] {
            let result = try await CLI.run([command, "--force", "-o", output, source], in: sandbox)
            #expect(result.status == 1)
            #expect(
                result.stderr == "sluice: cannot \(command) '\(source)' to '\(output)': source and destination are the same file\n",
                "\(result.stderr)")
            #expect(sandbox.contents(source) == before)
            #expect(sandbox.leftovers().isEmpty)
        }
    }

    @Test(arguments: ["compress", "decompress"])
    func outputOptionWithTwoSourcesIsBadUsage(command: String) async throws {
        let sandbox = try Sandbox()
        try sandbox.write("a", to: "a.gz")
        try sandbox.write("b", to: "b.gz")
        let result = try await CLI.run([command, "-o", "out", "a.gz", "b.gz"], in: sandbox)
        #expect(result.status == 64)
        #expect(result.stderr.contains("-o"))
        #expect(sandbox.listing() == ["a.gz", "b.gz"])
    }

    @Test func removeOptionDeletesTheSourceAfterSuccess() async throws {
        let sandbox = try Sandbox()
        let data = mixedData(count: 100_000)
        try sandbox.write(data, to: "x")
        let compressed = try await CLI.run(["compress", "--rm", "x"], in: sandbox)
        #expect(compressed.status == 0)
        #expect(sandbox.listing() == ["x.gz"])
        let decompressed = try await CLI.run(["decompress", "--rm", "x.gz"], in: sandbox)
        #expect(decompressed.status == 0)
        #expect(sandbox.listing() == ["x"])
        #expect(sandbox.contents("x") == data)
    }

    @Test func removeOptionKeepsTheSourceWhenTheOutputFails() async throws {
        let sandbox = try Sandbox()
        try await writeWithGzip(mixedData(count: 100_000), to: "x", in: sandbox)
        unlink(sandbox.path("x"))
        var bytes = try #require(sandbox.contents("x.gz"))
        bytes[bytes.count - 8] ^= 0xFF
        try sandbox.write(bytes, to: "x.gz")
        let result = try await CLI.run(["decompress", "--rm", "x.gz"], in: sandbox)
        #expect(result.status == 1)
        #expect(sandbox.contents("x.gz") == bytes)
        expectNotCommitted("x", in: sandbox)

        // A destination that cannot be created: the source stays too.
        try sandbox.write("data\n", to: "y")
        try sandbox.write("OLD", to: "y.gz")
        let refused = try await CLI.run(["compress", "--rm", "y"], in: sandbox)
        #expect(refused.status == 1)
        #expect(sandbox.text("y") == "data\n")
        #expect(sandbox.text("y.gz") == "OLD")
    }

    /// `/dev/null` is written in place: nothing durable holds the data, so the source stays.
    @Test(arguments: ["compress", "decompress"])
    func removeOptionKeepsTheSourceWhenTheOutputIsNotARegularFile(command: String) async throws {
        let sandbox = try Sandbox()
        try await writeWithGzip(Array("data\n".utf8), to: "x", in: sandbox)
        let source = command == "compress" ? "x" : "x.gz"
        let result = try await CLI.run([command, "--rm", "-o", "/dev/null", source], in: sandbox)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("sluice: kept '\(source)'"), "\(result.stderr)")
        #expect(result.stderr.contains("durable regular file"), "\(result.stderr)")
        #expect(sandbox.listing() == ["x", "x.gz"])
    }

    @Test(arguments: [
        ["compress", "--rm", "--no-fsync", "x"],
        ["compress", "--rm", "-c", "x"],
        ["compress", "--rm", "-o", "-", "x"],
        ["decompress", "--rm", "--no-fsync", "x.gz"],
        ["decompress", "--rm", "-c", "x.gz"],
        ["decompress", "--rm", "-t", "x.gz"],
    ])
    func removeOptionWithoutADurableFileOutputIsBadUsage(arguments: [String]) async throws {
        let sandbox = try Sandbox()
        try await writeWithGzip(Array("data\n".utf8), to: "x", in: sandbox)
        let result = try await CLI.run(arguments, in: sandbox)
        #expect(result.status == 64)
        #expect(result.stderr.contains("--rm"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(sandbox.listing() == ["x", "x.gz"])
    }

    @Test func severalSourcesWhereOneIsMissingStillCompressTheOthers() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("first\n", to: "a")
        try sandbox.write("third\n", to: "c")
        let result = try await CLI.run(["compress", "a", "missing", "c"], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr.contains("'missing'"))
        #expect(sandbox.listing() == ["a", "a.gz", "c", "c.gz"])
        let decoded = try await CLI.shell("gzip -dc a.gz c.gz", in: sandbox)
        #expect(decoded.stdoutText == "first\nthird\n")
    }

    /// C13: files whose size lies.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/version"), "/proc/version is missing"))
    func compressingProcVersionMatchesItsContent() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.run(["compress", "-c", "/proc/version"], in: sandbox)
        #expect(result.status == 0)
        try sandbox.write(result.stdout, to: "version.gz")
        let check = try await CLI.shell("gzip -dc version.gz > decoded && cat /proc/version > expected", in: sandbox)
        #expect(check.status == 0)
        let decoded = try #require(sandbox.contents("decoded"))
        #expect(!decoded.isEmpty)
        #expect(decoded == sandbox.contents("expected"))
    }

    /// C13: `/proc/cpuinfo` reports size 0; its MHz lines change between reads, its line count
    /// does not.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/cpuinfo"), "/proc/cpuinfo is missing"))
    func compressingProcCPUInfoGivesANonEmptyMember() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.run(["compress", "-c", "/proc/cpuinfo"], in: sandbox)
        #expect(result.status == 0)
        #expect(result.stdout.count > 20, "a member with data, not an empty one")
        try sandbox.write(result.stdout, to: "cpuinfo.gz")
        let check = try await CLI.shell("gzip -dc cpuinfo.gz | wc -l; wc -l < /proc/cpuinfo", in: sandbox)
        #expect(check.status == 0)
        let counts = check.stdoutText.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(counts.count == 2 && counts[0] == counts[1] && counts[0] != "0", "\(counts)")
    }

    /// C17: the writer fails with `EFBIG` mid-way; the old destination stays. Decompression
    /// too: 2 MiB out of a small member.
    @Test(arguments: ["compress --force -o dest.bin big.bin", "decompress --force -o dest.bin big.bin.gz"])
    func fileTooLargeLeavesTheDestinationUntouched(command: String) async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell("""
            head -c 2M /dev/urandom > big.bin; gzip -1 -c big.bin > big.bin.gz; printf OLD > dest.bin
            ( ulimit -f 1024; trap '' XFSZ; "$SLUICE" \(command) )
            """, in: sandbox)
        #expect(result.status != 0)
        #expect(result.stderr.contains("File too large"), "\(result.stderr)")
        #expect(result.stderr.contains("'dest.bin'"))
        expectNotCommitted("dest.bin", old: Array("OLD".utf8), in: sandbox)
        #expect(sandbox.status("big.bin").map { $0.st_size } == 2 * 1024 * 1024)
    }

    /// C24: compressed data is not written to a terminal without `-f` (`script` gives the
    /// child a pseudo-terminal as standard output).
    @Test(.enabled(if: Tool.script != nil, "script (util-linux) is not installed: no pseudo-terminal to write to"))
    func compressedDataIsNotWrittenToATerminalWithoutForce() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(mixedData(count: 10_000), to: "input")
        let refused = try await CLI.shell(#"script -qec '"$SLUICE" compress -c input' /dev/null"#, in: sandbox)
        #expect(refused.status == 1)
        #expect(refused.stdoutText.contains("refusing to write compressed data to a terminal"), "\(refused.stdoutText)")
        #expect(!refused.stdout.contains(0x8B), "no compressed bytes reached the terminal")

        let forced = try await CLI.shell(#"script -qec '"$SLUICE" compress -f -c input' /dev/null"#, in: sandbox)
        #expect(forced.status == 0)
        #expect(!forced.stdoutText.contains("refusing"))
        #expect(sandbox.listing() == ["input"])
    }
}
