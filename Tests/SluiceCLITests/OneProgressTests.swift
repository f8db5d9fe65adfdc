import Foundation
@testable import SluiceCLI
import SluiceTestSupport
import Testing

/// One progress per command: `copy -r a b dest/` and several operands (whatever segments they
/// run in: files many at once, `--test` or standard input alone, an operand that waits for an
/// earlier one) draw one bar and print one last `--progress=json` line, whose counts cover
/// every file of the command, and number their files once each.
@Suite(.timeLimit(.minutes(4)))
struct OneProgressTests {
    /// The JSON lines of `stderr`.
    static func lines(_ stderr: String) throws -> [ProgressLine] {
        try stderr.split(separator: "\n").filter { $0.hasPrefix("{") }.map { try ProgressLine(String($0)) }
    }

    /// Checks the lines of one operation over `files` files: one `done` line, last, with
    /// `committed` files committed; a line per file before it, with the indices 0 to `files - 1`
    /// once each and the files done counting up by one.
    static func expectOneOperation(
        _ stderr: String, files: Int, committed: Int, error: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let lines = try Self.lines(stderr)
        #expect(lines.filter(\.isDone).count == 1, "\(stderr)", sourceLocation: sourceLocation)
        let last = try #require(lines.last, sourceLocation: sourceLocation)
        #expect(last.isDone, sourceLocation: sourceLocation)
        #expect(last.integer("filesCommitted") == Int64(committed), "\(last.text)", sourceLocation: sourceLocation)
        #expect(last.integer("totalFiles") == Int64(files), "\(last.text)", sourceLocation: sourceLocation)
        #expect(last.object["error"] as? String == error, "\(last.text)", sourceLocation: sourceLocation)
        #expect((last.fraction == 1) == (committed == files && error == nil), "\(last.text)", sourceLocation: sourceLocation)
        let perFile = lines.filter { $0.object["fileIndex"] != nil }
        #expect(perFile.compactMap { $0.integer("fileIndex") }.sorted() == (0..<Int64(files)).map { $0 }, "\(stderr)", sourceLocation: sourceLocation)
        #expect(perFile.compactMap { $0.integer("filesCompleted") } == (1...Int64(files)).map { $0 }, "\(stderr)", sourceLocation: sourceLocation)
    }

    @Test func severalTreesEndOneOperation() async throws {
        let sandbox = try Sandbox()
        try sandbox.makeDirectory("a")
        try sandbox.makeDirectory("a/x")
        try sandbox.makeDirectory("b")
        try sandbox.makeDirectory("t")
        try sandbox.write(pattern(count: 300_000, seed: 1), to: "a/x/f1")
        try sandbox.write(pattern(count: 10, seed: 2), to: "a/f2")
        try sandbox.write(pattern(count: 200_000, seed: 3), to: "b/f3")
        try sandbox.write(pattern(count: 5, seed: 4), to: "c")
        let result = try await CLI.run(["copy", "-r", "--progress=json", "a", "b", "c", "t"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        try Self.expectOneOperation(result.stderr, files: 4, committed: 4)
        let last = try #require(try Self.lines(result.stderr).last)
        #expect(last.integer("bytesCommitted") == 500_015)
        #expect(sandbox.contents("t/b/f3") == pattern(count: 200_000, seed: 3))
    }

    /// A tree that fails whole (copied into itself) and one that is copied: one last line,
    /// which names the failure.
    @Test func aTreeThatFailsIsPartOfTheOperation() async throws {
        let sandbox = try Sandbox()
        try sandbox.makeDirectory("a")
        try sandbox.makeDirectory("b")
        try sandbox.write(pattern(count: 1000, seed: 1), to: "a/f")
        try sandbox.write(pattern(count: 1000, seed: 2), to: "b/g")
        let result = try await CLI.run(["copy", "-r", "--progress=json", "b", "a", "a"], in: sandbox)
        #expect(result.status == 1, "\(result.stderr)")
        let lines = try Self.lines(result.stderr)
        #expect(lines.filter(\.isDone).count == 1, "\(result.stderr)")
        let last = try #require(lines.last)
        #expect(last.integer("filesCommitted") == 1, "\(last.text)")
        #expect((last.object["error"] as? String)?.contains("into itself") == true, "\(last.text)")
    }

    /// `--test` runs each operand alone: still one operation, a failed member included.
    @Test func operandsTestedAloneEndOneOperation() async throws {
        let sandbox = try Sandbox()
        try await writeWithGzip(pattern(count: 100_000, seed: 1), to: "a", in: sandbox)
        try sandbox.write("not gzip", to: "bad.gz")
        try await writeWithGzip(pattern(count: 50_000, seed: 2), to: "b", in: sandbox)
        let result = try await CLI.run(["decompress", "-t", "--progress=json", "a.gz", "bad.gz", "b.gz"], in: sandbox)
        #expect(result.status == 1, "\(result.stderr)")
        try Self.expectOneOperation(result.stderr, files: 3, committed: 2, error: "1 of 3 files failed")
        let failed = try Self.lines(result.stderr).first { $0.integer("fileIndex") == 1 }
        #expect((failed?.object["fileError"] as? String)?.contains("not in gzip format") == true)
    }

    /// Operands to standard output, standard input among them, run alone, one after another;
    /// an operand whose destination an earlier one wrote waits for it (a segment of its own)
    /// and is refused: each one operation.
    @Test func segmentsAndOperandsAloneEndOneOperation() async throws {
        let sandbox = try Sandbox()
        try sandbox.makeDirectory("x")
        try sandbox.makeDirectory("y")
        try sandbox.write(pattern(count: 70_000, seed: 1), to: "x/f")
        try sandbox.write(pattern(count: 60_000, seed: 2), to: "y/f")
        try sandbox.write(pattern(count: 50_000, seed: 3), to: "g")
        try sandbox.write(pattern(count: 40_000, seed: 4), to: "in")
        let compressed = try await CLI.start(
            ["compress", "--progress=json", "-c", "g", "-", "x/f"], in: sandbox, stdin: .file(sandbox.path("in")),
            stdout: .null
        ).finish()
        #expect(compressed.status == 0, "\(compressed.stderr)")
        try Self.expectOneOperation(compressed.stderr, files: 3, committed: 3)
        try sandbox.makeDirectory("out")
        let copied = try await CLI.run(["copy", "--progress=json", "x/f", "g", "y/f"] + ["out/"], in: sandbox)
        #expect(copied.status == 1, "\(copied.stderr)")
        try Self.expectOneOperation(copied.stderr, files: 3, committed: 2, error: "1 of 3 files failed")
    }

    /// On a terminal, several trees draw one bar: every redraw has the one label, and the last
    /// line reads every file of every tree.
    @Test func severalTreesDrawOneBar() async throws {
        let sandbox = try Sandbox()
        try sandbox.makeDirectory("a")
        try sandbox.makeDirectory("b")
        try sandbox.makeDirectory("t")
        try sandbox.write(pattern(count: 100_000, seed: 1), to: "a/f1")
        try sandbox.write(pattern(count: 100_000, seed: 2), to: "b/f2")
        try sandbox.write(pattern(count: 100_000, seed: 3), to: "b/f3")
        let terminal = try PseudoTerminal(columns: 100)
        let process = try CLI.start(
            ["copy", "-r", "--progress", "a", "b", "t"], in: sandbox, stdout: .null, stderr: .descriptor(terminal.terminal))
        terminal.closeTerminal()
        let text = await terminal.readToEnd()
        let result = await process.finish()
        #expect(result.status == 0)
        let lines = redraws(text).filter { !$0.isEmpty }
        #expect(!lines.isEmpty && lines.allSatisfy { $0.hasPrefix("copy 2 sources") }, "\(text)")
        let last = try #require(lines.last)
        #expect(last.contains("100%") && last.contains("3/3 files"), "\(last)")
        // One last line, ended once ("\r\n" is one Character: count the scalars).
        #expect(text.unicodeScalars.filter { $0 == "\n" }.count == 1, "\(text.debugDescription)")
    }
}
