#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// What `gzip` and `pigz` write, `sluice decompress` decodes, at every chunk size.
@Suite(.timeLimit(.minutes(4)))
struct DecompressRoundTripTests {
    @Test(arguments: [1, 6, 9], roundTripChunkSizes)
    func sluiceDecodesWhatGzipCompresses(level: Int, chunkSize: String) async throws {
        let sandbox = try Sandbox()
        let data = mixedData(count: roundTripInputSize(chunkSize: chunkSize))
        try await writeWithGzip(data, to: "input", level: level, in: sandbox)
        let result = try await CLI.run(["decompress", "--chunk-size", chunkSize, "-c", "input.gz"], in: sandbox)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        #expect(result.stdout == data)
    }

    /// pigz writes its output in independently compressed blocks (with empty stored blocks
    /// between them) from several threads.
    @Test(.enabled(if: Tool.pigz != nil, "pigz is not installed"), arguments: [1, 6, 9], roundTripChunkSizes)
    func sluiceDecodesWhatPigzCompresses(level: Int, chunkSize: String) async throws {
        let sandbox = try Sandbox()
        let data = mixedData(count: roundTripInputSize(chunkSize: chunkSize))
        try sandbox.write(data, to: "input")
        let pigz = try await CLI.shell("pigz -n -p 2 -\(level) -c input > input.gz", in: sandbox)
        try #require(pigz.status == 0, "pigz: \(pigz.stderr)")
        let result = try await CLI.run(["decompress", "--chunk-size", chunkSize, "-c", "input.gz"], in: sandbox)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        #expect(result.stdout == data)
    }

    @Test(.enabled(if: Tool.pigz != nil, "pigz is not installed"))
    func pigzDecodesWhatSluiceCompresses() async throws {
        let sandbox = try Sandbox()
        let data = mixedData(count: 2_000_000)
        try sandbox.write(data, to: "input")
        #expect(try await CLI.run(["compress", "--chunk-size", "64K", "input"], in: sandbox).status == 0)
        let pigz = try await CLI.shell("pigz -dc input.gz > decoded", in: sandbox)
        #expect(pigz.status == 0, "pigz: \(pigz.stderr)")
        #expect(sandbox.contents("decoded") == data)
    }
}

/// Names, operands and the options of `sluice decompress`.
@Suite(.timeLimit(.minutes(3)))
struct DecompressCommandTests {
    @Test func nameWithoutGzSuffixNeedsAnOutputName() async throws {
        let sandbox = try Sandbox()
        try await writeWithGzip(Array("data\n".utf8), to: "x", in: sandbox)
        try #require(rename(sandbox.path("x.gz"), sandbox.path("packed")) == 0)
        unlink(sandbox.path("x"))
        let refused = try await CLI.run(["decompress", "packed"], in: sandbox)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("'packed'"))
        #expect(refused.stderr.contains("-o"), "\(refused.stderr)")
        #expect(sandbox.listing() == ["packed"])

        let named = try await CLI.run(["decompress", "-o", "plain", "packed"], in: sandbox)
        #expect(named.status == 0)
        #expect(sandbox.text("plain") == "data\n")
    }

    @Test func nameThatIsOnlyTheSuffixNeedsAnOutputName() async throws {
        let sandbox = try Sandbox()
        try await writeWithGzip(Array("data\n".utf8), to: "x", in: sandbox)
        try #require(rename(sandbox.path("x.gz"), sandbox.path(".gz")) == 0)
        unlink(sandbox.path("x"))
        let result = try await CLI.run(["decompress", ".gz"], in: sandbox)
        #expect(result.status == 1)
        #expect(sandbox.listing() == [".gz"])
    }

    @Test func outputGoesBesideTheSourceInItsDirectory() async throws {
        let sandbox = try Sandbox()
        try sandbox.makeDirectory("d")
        try await writeWithGzip(Array("inside\n".utf8), to: "d/x", in: sandbox)
        unlink(sandbox.path("d/x"))
        let result = try await CLI.run(["decompress", "d/x.gz"], in: sandbox)
        #expect(result.status == 0)
        #expect(sandbox.text("d/x") == "inside\n")
        #expect(sandbox.listing() == ["d"])
    }

    @Test func integrityCheckWritesNothingAndExitsZeroForAGoodFile() async throws {
        let sandbox = try Sandbox()
        try await writeWithGzip(mixedData(count: 300_000), to: "x", in: sandbox)
        unlink(sandbox.path("x"))
        for flag in ["-t", "--test"] {
            let result = try await CLI.run(["decompress", flag, "x.gz"], in: sandbox)
            #expect(result.status == 0)
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.isEmpty)
            #expect(sandbox.listing() == ["x.gz"])
        }
    }

    @Test func integrityCheckExitsOneForABadFile() async throws {
        let sandbox = try Sandbox()
        try await writeWithGzip(mixedData(count: 300_000), to: "x", in: sandbox)
        unlink(sandbox.path("x"))
        var bytes = try #require(sandbox.contents("x.gz"))
        bytes[bytes.count - 8] ^= 0xFF
        try sandbox.write(bytes, to: "x.gz")
        let result = try await CLI.run(["decompress", "-t", "x.gz"], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("CRC"), "\(result.stderr)")
        #expect(sandbox.listing() == ["x.gz"])
    }

    @Test func maxOutputSmallerThanTheOutputFailsAndCommitsNothing() async throws {
        let sandbox = try Sandbox()
        let data = mixedData(count: 1_000_000)
        try await writeWithGzip(data, to: "x", in: sandbox)
        unlink(sandbox.path("x"))
        let result = try await CLI.run(["decompress", "--max-output", "512K", "x.gz"], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr.contains("output limit of 524288 bytes exceeded"), "\(result.stderr)")
        expectNotCommitted("x", in: sandbox)

        try sandbox.write("OLD", to: "y")
        let forced = try await CLI.run(["decompress", "--force", "--max-output=999999", "-o", "y", "x.gz"], in: sandbox)
        #expect(forced.status == 1)
        expectNotCommitted("y", old: Array("OLD".utf8), in: sandbox)

        // Exactly the size is within the limit.
        let exact = try await CLI.run(["decompress", "--max-output", "1000000", "x.gz"], in: sandbox)
        #expect(exact.status == 0)
        #expect(sandbox.contents("x") == data)
    }

    @Test func severalSourcesWhereOneFailsStillDecompressTheOthers() async throws {
        let sandbox = try Sandbox()
        try await writeWithGzip(Array("first\n".utf8), to: "a", in: sandbox)
        try await writeWithGzip(mixedData(count: 100_000), to: "b", in: sandbox)
        try await writeWithGzip(Array("third\n".utf8), to: "c", in: sandbox)
        for name in ["a", "b", "c"] { unlink(sandbox.path(name)) }
        var bytes = try #require(sandbox.contents("b.gz"))
        bytes[bytes.count - 1] ^= 0x01
        try sandbox.write(bytes, to: "b.gz")
        try sandbox.write("OLD", to: "b")

        let result = try await CLI.run(["decompress", "--force", "a.gz", "b.gz", "c.gz"], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderrLines.count == 1)
        #expect(result.stderr.contains("'b.gz'"))
        #expect(result.stderr.contains("length"), "\(result.stderr)")
        #expect(sandbox.text("a") == "first\n")
        #expect(sandbox.text("c") == "third\n")
        expectNotCommitted("b", old: Array("OLD".utf8), in: sandbox)
    }

    @Test func severalSourcesWithoutSuffixStillDecompressTheOthers() async throws {
        let sandbox = try Sandbox()
        try await writeWithGzip(Array("first\n".utf8), to: "a", in: sandbox)
        unlink(sandbox.path("a"))
        try sandbox.write("plain", to: "notes.txt")
        let result = try await CLI.run(["decompress", "notes.txt", "a.gz"], in: sandbox)
        #expect(result.status == 1)
        #expect(sandbox.text("a") == "first\n")
        #expect(sandbox.listing() == ["a", "a.gz", "notes.txt"])
    }
}


/// C27 at the command line: decompression progress follows compressed bytes consumed.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct DecompressProgressTests {
    @Test func progressIsMonotonicAndEndsAtTheCompressedSize() async throws {
        let sandbox = try Sandbox()
        let size = 50 * 1024 * 1024
        try sandbox.write(pattern(count: size), to: "random")
        // A one-byte second member: its ISIZE says 1, which must not bend the fraction.
        let made = try await CLI.shell(
            "gzip -1 -n -c random > random.gz && printf x | gzip -n >> random.gz && rm random", in: sandbox)
        try #require(made.status == 0, "\(made.stderr)")
        let compressedSize = try #require(sandbox.status("random.gz")).st_size

        let result = try await CLI.run(
            ["decompress", "--progress=json", "--chunk-size", "256K", "--no-fsync", "-o", "out", "random.gz"],
            in: sandbox)
        #expect(result.status == 0)
        let lines = try result.stderrLines.map(ProgressLine.init)
        try #require(!lines.isEmpty)
        var previous = 0.0
        for line in lines {
            #expect(line.integer("totalBytes") == Int64(compressedSize))
            let fraction = try #require(line.fraction, "the total is known: \(line.text)")
            #expect((0...1).contains(fraction))
            #expect(fraction >= previous, "\(line.text)")
            previous = fraction
            #expect(line.integer("bytesCompleted").map { $0 <= Int64(compressedSize) } == true)
        }
        #expect(lines.dropLast().allSatisfy { !$0.isDone })
        let last = try #require(lines.last)
        #expect(last.isDone)
        #expect(last.object["error"] == nil)
        #expect(last.fraction == 1.0)
        #expect(last.integer("bytesCompleted") == Int64(compressedSize))
        #expect(last.integer("bytesWritten") == Int64(size + 1))
        #expect(sandbox.status("out").map { Int($0.st_size) } == size + 1)
        unlink(sandbox.path("out"))
    }
}

/// SIGINT while the decoder stage waits for more input: exit 130, nothing committed.
@Suite(.timeLimit(.minutes(3)))
struct DecompressInterruptTests {
    @Test func sigintMidMemberKeepsTheOldDestination() async throws {
        let sandbox = try Sandbox()
        try await writeWithGzip(mixedData(count: 1_000_000), to: "x", in: sandbox)
        let member = try #require(sandbox.contents("x.gz"))
        try sandbox.write("OLD", to: "out")
        let input = try Pipe.make()
        // The test keeps the write end open after half the member: the decoder waits mid-member.
        defer { input.closeWriteEnd() }
        let process = try CLI.start(
            ["decompress", "--force", "--progress=json", "--chunk-size", "16K", "-o", "out", "-"], in: sandbox,
            stdin: .descriptor(input.readEnd), errorPipe: true)
        input.closeReadEnd()
        let half = Array(member.prefix(member.count / 2))
        let written = await onThread {
            half.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let count = write(input.writeEnd, buffer.baseAddress! + offset, buffer.count - offset)
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else { return false }
                    offset += count
                }
                return true
            }
        }
        #expect(written)
        // Wait until decoded bytes have reached the writer: the decoder stage is running. A hang
        // guard kills the child if that progress never shows (the pipe then ends the loop).
        let guardTask = Task {
            try await Task.sleep(for: .seconds(30))
            process.send(signal: SIGKILL)
        }
        var sawOutput = false
        while let line = await process.nextErrorLine() {
            if try ProgressLine(line).integer("bytesWritten").map({ $0 > 0 }) == true {
                sawOutput = true
                break
            }
        }
        guardTask.cancel()
        #expect(sawOutput, "no progress line showed decoded bytes while the input waited")
        process.send(signal: SIGINT)
        let result = await process.finish()
        #expect(result.status == 130, "\(result.stderr)")
        #expect(result.signal == nil)
        expectNotCommitted("out", old: Array("OLD".utf8), in: sandbox)
        for line in try result.stderrLines.map(ProgressLine.init) where line.isDone {
            #expect(line.object["error"] is String, "an interrupted decompression ended with \(line.text)")
        }
    }
}

/// C38: compressed data is not read from a terminal (`script` makes standard input one).
@Suite(.timeLimit(.minutes(3)))
struct TerminalInputTests {
    @Test(.enabled(if: Tool.script != nil, "script (util-linux) is not installed: no terminal for standard input"),
          arguments: [[], ["-"], ["-c", "-"]])
    func decompressRefusesATerminalAsInput(arguments: [String]) async throws {
        let sandbox = try Sandbox()
        let command = (["decompress"] + arguments).joined(separator: " ")
        let result = try await CLI.shell(#"script -qec '"$SLUICE" \#(command); echo "exit $?"' /dev/null"#, in: sandbox)
        #expect(result.stdoutText.contains("refusing to read compressed data from a terminal"), "\(result.stdoutText)")
        #expect(result.stdoutText.contains("exit 1"), "\(result.stdoutText)")
        #expect(sandbox.listing().isEmpty)
    }
}
