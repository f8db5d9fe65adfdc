#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// Several file operands at once (`copy a b c DIR/`, `compress a b c`): the same files, exit
/// statuses and messages as one after another, messages in operand order, one progress.
@Suite(.timeLimit(.minutes(3)))
struct ManyFilesTests {
    /// `count` files `f0`... of different sizes in the sandbox.
    static func makeFiles(_ count: Int, in sandbox: Sandbox) throws -> [String] {
        try (0..<count).map { index in
            let name = "f\(index)"
            try sandbox.write(pattern(count: 1000 + index * 37_000), to: name)
            return name
        }
    }

    @Test func copiesEveryOperandIntoTheDirectory() async throws {
        let sandbox = try Sandbox()
        let names = try Self.makeFiles(12, in: sandbox)
        try sandbox.makeDirectory("out")
        let result = try await CLI.run(["copy"] + names + ["out/"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        for name in names { #expect(sandbox.contents("out/" + name) == sandbox.contents(name)) }
        #expect(sandbox.leftovers("out").isEmpty)
    }

    @Test func aFailedOperandDoesNotStopTheOthersAndMessagesComeInOperandOrder() async throws {
        let sandbox = try Sandbox()
        let names = try Self.makeFiles(4, in: sandbox)
        try sandbox.makeDirectory("out")
        try sandbox.write("old", to: "out/f2")
        let result = try await CLI.run(["copy", names[0], "missing", names[1], names[2], names[3], "out/"], in: sandbox)
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines == [
            "sluice: cannot open 'missing': No such file or directory",
            "sluice: cannot create 'out/f2': File exists (use --force to overwrite)",
        ])
        #expect(sandbox.contents("out/f3") == sandbox.contents("f3"))
        #expect(sandbox.text("out/f2") == "old")
    }

    @Test func aLaterOperandNeverOverwritesAFileThisRunCreated() async throws {
        let sandbox = try Sandbox()
        try sandbox.makeDirectory("a")
        try sandbox.makeDirectory("out")
        try sandbox.write("first", to: "a/x")
        try sandbox.write("second", to: "x")
        let result = try await CLI.run(["copy", "-f", "a/x", "x", "out"], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr == "sluice: cannot create 'out/x': will not overwrite a file this run just created with 'x'\n")
        #expect(sandbox.text("out/x") == "first")
    }

    @Test func compressReportsSkipsAndFilesInOperandOrder() async throws {
        let sandbox = try Sandbox()
        let names = try Self.makeFiles(3, in: sandbox)
        try sandbox.write("z", to: "y.gz")
        let result = try await CLI.run(["compress", "-v", names[0], "y.gz", names[1], names[2]], in: sandbox)
        #expect(result.status == 2)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 7, "\(lines)")
        guard lines.count == 7 else { return }
        #expect(lines[0] == "'f0' -> 'f0.gz'")
        #expect(lines[1].hasPrefix("sluice: compress 'f0' to 'f0.gz'"))
        #expect(lines[2] == "sluice: 'y.gz' already has the .gz suffix -- unchanged")
        #expect(lines[3] == "'f1' -> 'f1.gz'")
        #expect(lines[4].hasPrefix("sluice: compress 'f1' to 'f1.gz'"))
        #expect(lines[5] == "'f2' -> 'f2.gz'")
        #expect(lines[6].hasPrefix("sluice: compress 'f2' to 'f2.gz'"))
        let back = try await CLI.run(["decompress", "--rm", "-f", "f0.gz", "f1.gz", "f2.gz"], in: sandbox)
        #expect(back.status == 0, "\(back.stderr)")
        for name in names { #expect(!sandbox.exists(name + ".gz")) }
        #expect(sandbox.contents("f2") == pattern(count: 1000 + 2 * 37_000))
    }

    /// `-v` on a tree: one `'SRC' -> 'DST'` line per file copied, as `cp -v` prints it (in the
    /// order the files are committed), then the summary; all on standard error.
    @Test func verboseTreeCopyNamesEachFile() async throws {
        let sandbox = try Sandbox()
        try sandbox.makeDirectory("d")
        try sandbox.makeDirectory("d/sub")
        try sandbox.write("a", to: "d/a")
        try sandbox.write("b", to: "d/sub/b")
        let result = try await CLI.run(["copy", "-r", "-v", "--no-fsync", "d", "e"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.dropLast().sorted() == ["'d/a' -> 'e/a'", "'d/sub/b' -> 'e/sub/b'"], "\(lines)")
        #expect(lines.last?.hasPrefix("sluice: copy 'd' to 'e': 2 files") == true, "\(lines)")
    }

    @Test func jsonProgressHasALinePerFileAndOneWithTheTotals() async throws {
        let sandbox = try Sandbox()
        let names = try Self.makeFiles(3, in: sandbox)
        try sandbox.makeDirectory("out")
        let result = try await CLI.run(["copy", "--progress=json", names[0], "missing\"", names[1], names[2], "out"], in: sandbox)
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        let json = lines.filter { $0.hasPrefix("{") }
        let objects = try json.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        let perFile = objects.filter { $0["file"] != nil }
        #expect(perFile.count == 4)
        #expect(Set(perFile.compactMap { $0["fileIndex"] as? Int }) == [0, 1, 2, 3])
        #expect(perFile.contains { $0["file"] as? String == "missing\"" && $0["fileError"] != nil })
        let last = try #require(objects.last)
        #expect(last["done"] as? Bool == true)
        #expect(last["filesCompleted"] as? Int == 4)
        #expect(last["filesFailed"] as? Int == 1)
        #expect(last["file"] == nil)
        #expect(lines.contains("sluice: cannot open 'missing\"': No such file or directory"))
    }

    /// The bar on a terminal: files and bytes of the totals and the current name while it runs,
    /// one line at the end.
    @Test func barShowsFilesAndBytesOnATerminal() async throws {
        let sandbox = try Sandbox()
        let names = try Self.makeFiles(5, in: sandbox)
        try sandbox.makeDirectory("out")
        let terminal = try PseudoTerminal(columns: 100)
        let process = try CLI.start(
            ["copy", "--progress"] + names + ["out"], in: sandbox, stdout: .null, stderr: .descriptor(terminal.terminal))
        terminal.closeTerminal()
        let text = await terminal.readToEnd()
        let result = await process.finish()
        #expect(result.status == 0)
        let lines = redraws(text)
        #expect(lines.last?.hasPrefix("copy 5 files  ") == true, "\(lines)")
        #expect(lines.last?.contains("5/5 files") == true, "\(lines)")
        #expect(lines.last?.contains("100%") == true, "\(lines)")
        #expect(text.filter { $0 == "\r\n" || $0 == "\n" }.count == 1)
        for line in lines.dropLast() { #expect(line.contains(" files") && line.hasPrefix("copy 5 files: '"), "\(line)") }
    }
}

/// SIGINT while several files are in flight.
@Suite(.timeLimit(.minutes(3)))
struct ManyFilesSignalTests {
    /// Three files are committed (their `--progress=json` lines say so) while a FIFO operand
    /// waits for a writer; SIGINT then stops all at once: exit 130, the committed files stay,
    /// the FIFO's destination and every temporary file are gone.
    @Test func sigintKeepsCommittedFilesAndLeavesNothingOfTheOthers() async throws {
        let sandbox = try Sandbox()
        let names = try ManyFilesTests.makeFiles(3, in: sandbox)
        try sandbox.makeFIFO("p")
        try sandbox.makeDirectory("out")
        let process = try CLI.start(
            ["copy", "--progress=json", names[0], names[1], "p", names[2], "out"], in: sandbox, errorPipe: true)
        var committed: Set<String> = []
        while committed.count < 3 {
            let line = try #require(await process.nextErrorLine())
            let object = try ProgressLine(line).object
            if let file = object["file"] as? String, object["fileError"] == nil { committed.insert(file) }
        }
        #expect(committed == Set(names))
        process.send(signal: SIGINT)
        let result = await process.finish()
        #expect(result.status == 130, "\(result.stderr)")
        #expect(result.signal == nil)
        #expect(Set(sandbox.listing("out")) == Set(names))
        for name in names { #expect(sandbox.contents("out/" + name) == sandbox.contents(name)) }
        #expect(sandbox.leftovers("out").isEmpty)
        // A file committed before the signal whose report waited for the FIFO's (messages come
        // in operand order) is named as written, once. The first two may be too: their progress
        // lines can come out before the command has taken their outcomes, and the signal between.
        let messages = result.stderrLines.filter { !$0.hasPrefix("{") }
        let written = Set(names.map { "sluice: 'out/\($0)' was written before the interruption" })
        #expect(messages.allSatisfy(written.contains), "\(messages)")
        #expect(Set(messages).count == messages.count, "\(messages)")
        for line in try result.stderrLines.filter({ $0.hasPrefix("{") }).map(ProgressLine.init) where line.isDone {
            #expect(line.object["error"] as? String == "interrupted", "\(line.text)")
        }
    }
}
