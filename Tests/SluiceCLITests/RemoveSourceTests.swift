#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// `--rm` removes a source only once its output is a complete, durable regular file; a symbolic
/// link at the destination is replaced with `--force` (never written through) when it leads to a
/// regular file, and written in place when it leads to a device or FIFO (`/dev/stdout`).
@Suite(.timeLimit(.minutes(3)))
struct RemoveSourceTests {
    @Test func removesTheSourceAfterADurableCommit() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(String(repeating: "sluice ", count: 1000), to: "a")
        let result = try await CLI.run(["compress", "--rm", sandbox.path("a")], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!sandbox.exists("a"))
        #expect(sandbox.exists("a.gz"))
    }

    /// The order the crash-state explorer checks (`CrashStateTests`, remove-sources), as the
    /// command runs it: every copy named and its directory synced before the first source is
    /// removed, and the sources' directory synced after the last, so a crash once the command
    /// returned cannot bring a source back.
    @Test(.enabled(if: Tool.strace != nil, "needs strace"))
    func sourcesGoOnlyOnceTheCopiesAreDurableAndTheirRemovalIsDurable() async throws {
        let sandbox = try Sandbox()
        for name in ["a", "b", "c"] { try sandbox.write(String(repeating: name, count: 5000), to: name) }
        let root = URL(fileURLWithPath: sandbox.root).resolvingSymlinksInPath().path
        let log = sandbox.path(".trace")
        let result = try await CLI.start(
            program: "strace",
            ["-f", "-qq", "-y", "-o", log, "-E", "ASAN_OPTIONS=detect_leaks=0", "-e", "trace=fsync,linkat,rename,renameat2,unlink,unlinkat",
             "$SLUICE", "compress", "--rm", "a", "b", "c"],
            in: sandbox
        ).finish()
        #expect(result.status == 0, "\(result.stderr)")
        let calls = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").filter { !$0.contains("resumed>") && !$0.contains("= -1") }
        let isDirectorySync = { (line: Substring) in line.contains("fsync(") && line.contains("<\(root)>)") }
        let lastNaming = try #require(calls.lastIndex { $0.contains(".gz\"") && ($0.contains("linkat(") || $0.contains("rename")) })
        let sources = ["\"a\"", "\"b\"", "\"c\""]
        let removals = calls.indices.filter { index in
            calls[index].contains("unlink") && sources.contains { calls[index].contains($0) }
        }
        #expect(removals.count == 3, "\(calls)")
        let first = try #require(removals.first)
        let last = try #require(removals.last)
        #expect(calls[lastNaming..<first].contains(where: isDirectorySync), "no directory fsync between the copies and the removals: \(calls)")
        #expect(calls[last...].contains(where: isDirectorySync), "no directory fsync after the removals: \(calls)")
        #expect(!sandbox.exists("a") && sandbox.exists("c.gz"))
    }

    @Test func keepsTheSourceWhenTheOutputIsNotARegularFile() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("precious", to: "a")
        let result = try await CLI.run(["compress", "--rm", "-o", "/dev/null", sandbox.path("a")], in: sandbox)
        #expect(result.status == 2)
        #expect(result.stderr.contains("kept"))
        #expect(sandbox.text("a") == "precious")
    }

    @Test func keepsTheSourceWhenDecompressionWarned() async throws {
        let sandbox = try Sandbox()
        let made = try await CLI.shell("printf 'hello\\n' | gzip -n > a.gz && printf 'GARBAGE!!' >> a.gz", in: sandbox)
        #expect(made.status == 0)
        let result = try await CLI.run(["decompress", "--rm", sandbox.path("a.gz")], in: sandbox)
        #expect(result.status == 2)
        #expect(sandbox.exists("a.gz"))
        #expect(sandbox.text("a") == "hello\n")
    }

    @Test(arguments: [["--no-fsync"], ["-c"], ["-o", "-"]])
    func isBadUsageWithoutADurableFileOutput(_ extra: [String]) async throws {
        let sandbox = try Sandbox()
        try sandbox.write("precious", to: "a")
        let result = try await CLI.run(["compress", "--rm"] + extra + [sandbox.path("a")], in: sandbox)
        #expect(result.status == 64)
        #expect(sandbox.text("a") == "precious")
    }

    @Test func aSymlinkToADeviceIsWrittenInPlaceAndKeptByRemoveSource() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("precious", to: "a")
        try sandbox.makeSymbolicLink("a.gz", to: "/dev/null")
        let result = try await CLI.run(["compress", "--rm", sandbox.path("a")], in: sandbox)
        #expect(result.status == 2, "\(result.stderr)")
        let status = try #require(sandbox.status("a.gz"))
        #expect(status.st_mode & S_IFMT == S_IFLNK)
        #expect(sandbox.text("a") == "precious")
    }

    @Test func aSymlinkToARegularFileIsReplacedOnlyWithForce() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("data", to: "a")
        try sandbox.write("target", to: "target")
        try sandbox.makeSymbolicLink("link", to: sandbox.path("target"))
        let refused = try await CLI.run(["copy", sandbox.path("a"), sandbox.path("link")], in: sandbox)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("File exists"))
        let result = try await CLI.run(["copy", "-f", sandbox.path("a"), sandbox.path("link")], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        let status = try #require(sandbox.status("link"))
        #expect(status.st_mode & S_IFMT == S_IFREG)
        #expect(sandbox.text("link") == "data")
        #expect(sandbox.text("target") == "target")
    }

    @Test func decompressingToDevStdoutWritesInPlace() async throws {
        let sandbox = try Sandbox()
        let made = try await CLI.shell("printf 'hello\\n' | gzip -n > a.gz", in: sandbox)
        #expect(made.status == 0)
        let result = try await CLI.run(["decompress", "-o", "/dev/stdout", sandbox.path("a.gz")], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText == "hello\n")
    }

    @Test func standardOutputThatIsTheSourceIsRefused() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("data", to: "f")
        let result = try await CLI.shell("\"$SLUICE\" copy f - >> f", in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr.contains("same file"))
        #expect(sandbox.text("f") == "data")
    }

    @Test func sighupCleansUpAndExits129() async throws {
        let sandbox = try Sandbox()
        let input = try Pipe.make()
        defer { input.closeWriteEnd() }
        let process = try CLI.start(
            ["copy", "--progress=json", "-", "out"], in: sandbox, stdin: .descriptor(input.readEnd), errorPipe: true)
        input.closeReadEnd()
        _ = try #require(await process.nextErrorLine())
        process.send(signal: SIGHUP)
        let result = await process.finish()
        #expect(result.status == 129)
        #expect(result.signal == nil)
        #expect(!sandbox.exists("out"))
        #expect(sandbox.leftovers().isEmpty)
    }

    @Test(arguments: ["-10", "-0", "-19"])
    func levelsOutsideOneToNineAreBadUsage(_ option: String) async throws {
        let sandbox = try Sandbox()
        try sandbox.write("data", to: "a")
        let result = try await CLI.run(["compress", option, sandbox.path("a")], in: sandbox)
        #expect(result.status == 64)
        #expect(result.stderr.contains("compression level \(option)"))
        #expect(!sandbox.exists("a.gz"))
    }

    @Test func closedStandardOutputIsAFailureNotAFileWrite() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("data", to: "a")
        let result = try await CLI.shell("\"$SLUICE\" copy a - >&-", in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr.contains("Bad file descriptor"))
    }
}
