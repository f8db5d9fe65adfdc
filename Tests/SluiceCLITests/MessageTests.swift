#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// C39: one vocabulary of error words, no 100% for a failure, reports that say what happened,
/// `help CMD` as `CMD --help`, and the whole first member before a truncated one.
@Suite(.timeLimit(.minutes(3)))
struct MessageTests {
    /// The error of the last `--progress=json` line of an interrupted run.
    func lastError(of result: CLIResult) throws -> String? {
        let last = try ProgressLine(try #require(result.stderrLines.last))
        #expect(last.isDone)
        return last.object["error"] as? String
    }

    /// A signal while sluice waits for a reader of its FIFO destination (after it opened the
    /// source FIFO: the test's open for writing returns only then) says `interrupted`, as a
    /// signal during the copy does (`SignalTests`); never a Swift type name.
    @Test func signalWhileOpeningAFIFODestinationSaysInterrupted() async throws {
        let sandbox = try Sandbox()
        try sandbox.makeFIFO("in")
        try sandbox.makeFIFO("out")
        let process = try CLI.start(["copy", "--progress=json", "in", "out"], in: sandbox, errorPipe: true)
        let path = sandbox.path("in")
        let writer = await onThread { open(path, O_WRONLY | O_CLOEXEC) }
        try #require(writer >= 0)
        defer { close(writer) }
        process.send(signal: SIGINT)
        let result = await process.finish()
        #expect(result.status == 130)
        #expect(try lastError(of: result) == "interrupted", "\(result.stderr)")
        #expect(!result.stderr.contains("CancellationError"))
    }

    /// 2 MiB read (two 1 MiB chunks fit the pipeline) and a write that fails at 512 KiB
    /// (`EFBIG`): no JSON line has a fraction of 1 (the last said `1.0`, the source being read to
    /// its end), the bar on a terminal never says 100%.
    @Test func failedCopyNeverShowsComplete() async throws {
        let sandbox = try Sandbox()
        let json = try await CLI.shell(
            MidCopyFailureTests.script.replacingOccurrences(of: "%@", with: "--force --progress=json"), in: sandbox)
        #expect(json.status == 1)
        let last = try ProgressLine(try #require(json.stderrLines.last(where: { $0.hasPrefix("{") })))
        #expect(last.isDone && last.object["error"] is String)
        // How far the reader got before the write failed depends on the scheduling (the clamp
        // itself is `ProgressBarLayoutTests.aSourceReadToItsEndIsShownBelowComplete`).
        #expect((1...(2 << 20)).contains(last.integer("bytesCompleted") ?? 0))
        #expect(try #require(last.fraction) < 1, "\(last.text)")
        #expect(!json.stderr.contains("\"fraction\":1.0"), "\(json.stderr)")

        guard Tool.script != nil else { return }
        let script = MidCopyFailureTests.script.replacingOccurrences(of: "%@", with: "--force --progress")
        let bar = try await CLI.shell("script -qec '\(script.replacingOccurrences(of: "'", with: "'\\''"))' /dev/null", in: sandbox)
        #expect(bar.stdoutText.contains("copy 'big.bin'"), "\(bar.stdoutText)")
        #expect(bar.stdoutText.contains("File too large"))
        #expect(!bar.stdoutText.contains("100%"), "\(bar.stdoutText)")
    }

    /// `decompress -t -v` writes nothing: it reports the bytes it decoded.
    @Test func integrityCheckReportsBytesDecodedNotWritten() async throws {
        let sandbox = try Sandbox()
        try await writeWithGzip(pattern(count: 100_000), to: "data", in: sandbox)
        let result = try await CLI.run(["decompress", "-t", "-v", "data.gz"], in: sandbox)
        #expect(result.status == 0)
        let report = try #require(result.stderrLines.last)
        #expect(report.hasPrefix("sluice: test 'data.gz': "), "\(report)")
        #expect(report.contains("100000 bytes decoded"), "\(report)")
        #expect(!report.contains("written"))
    }

    @Test(arguments: ["copy", "compress", "decompress", "bench"])
    func helpCommandIsCommandHelp(command: String) async throws {
        let sandbox = try Sandbox()
        let help = try await CLI.run(["help", command], in: sandbox)
        let option = try await CLI.run([command, "--help"], in: sandbox)
        #expect(help.status == 0 && option.status == 0)
        #expect(help.stdoutText == option.stdoutText)
        #expect(help.stdoutText.contains("\nUSAGE: sluice \(command) [<options>]"))
    }

    @Test func helpForAnUnknownCommandIsBadUsage() async throws {
        let result = try await CLI.run(["help", "teleport"], in: try Sandbox())
        #expect(result.status == 64)
        #expect(result.stderr.contains("unknown command 'teleport'"))
    }

    /// `--progress json` would read `json` as a source: a usage error that shows the spelling.
    @Test(arguments: ["copy", "compress", "decompress"])
    func progressWithASpaceIsBadUsage(command: String) async throws {
        let sandbox = try Sandbox()
        try sandbox.write("data", to: "json")
        let result = try await CLI.run([command, "--progress", "json", "-o", "x"].filter { command != "copy" || $0 != "-o" }, in: sandbox)
        #expect(result.status == 64)
        #expect(result.stderr.contains("--progress=json"), "\(result.stderr)")
        #expect(sandbox.listing() == ["json"])
    }

    /// C57 (b): `-` is named as cp and cat name it, "standard output" (a full device here).
    @Test(arguments: [["copy", "data", "-"], ["compress", "-c", "data"]])
    func standardOutputIsNamedSo(arguments: [String]) async throws {
        let sandbox = try Sandbox()
        try sandbox.write(pattern(count: 100_000), to: "data")
        let result = try await CLI.shell(#""$SLUICE" \#(arguments.joined(separator: " ")) > /dev/full"#, in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot write to standard output: No space left on device"), "\(result.stderr)")
    }

    /// C57 (c): a tree's counts are singular where they are one.
    @Test func aTreesCountsAreSingularForOne() async throws {
        let sandbox = try Sandbox()
        let made = try await CLI.shell("mkdir -p t/d && printf x > t/d/f && ln -s f t/d/l && mkfifo t/p", in: sandbox)
        try #require(made.status == 0, "\(made.stderr)")
        let result = try await CLI.run(["copy", "-r", "-v", "t", "u"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stderr.contains(": 1 file (1 byte), 2 directories, 1 symbolic link, 0 hard links, 1 special file, 0 failed"),
            "\(result.stderr)")
    }

    /// A valid member then a truncated one, to standard output: the whole first member comes out
    /// before the error, at every chunk size (as `gzip -dc`).
    @Test(arguments: ["4096", "64K", "1M"])
    func wholeFirstMemberBeforeATruncatedOne(chunkSize: String) async throws {
        let sandbox = try Sandbox()
        let first = pattern(count: 300_000)
        try await writeWithGzip(first, to: "first", in: sandbox)
        try await writeWithGzip(pattern(count: 200_000, seed: 7), to: "second", in: sandbox)
        let second = try #require(sandbox.contents("second.gz"))
        try sandbox.write(try #require(sandbox.contents("first.gz")) + second.prefix(second.count / 2), to: "both.gz")
        let result = try await CLI.run(["decompress", "-c", "--chunk-size", chunkSize, "both.gz"], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr.contains("unexpected end of file"), "\(result.stderr)")
        #expect(result.stdout.count >= first.count)
        #expect(Array(result.stdout.prefix(first.count)) == first)
    }
}
