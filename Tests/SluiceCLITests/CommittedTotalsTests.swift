#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import SluiceCLI
import SluiceTestSupport
import Testing

/// C47: the last progress line of an operation that did not complete counts what it committed
/// (`bytesCommitted`, `filesCommitted`), never reads 100 % or N/N files, and says `failed` or
/// `interrupted`; in JSON and in text, for several operands and for a tree, for each ending: a
/// failed file, a signal, a full disk.
@Suite(.timeLimit(.minutes(4)))
struct CommittedTotalsTests {
    /// How the operation is given its files.
    enum Shape: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// `copy --progress f0 f1 f2 out/`.
        case operands
        /// `copy -r --progress s t` into an existing `t`: the files go to `t/s`.
        case tree
        var testDescription: String { rawValue }
    }

    static let cases: [(Shape, Bool)] = [(.operands, false), (.operands, true), (.tree, false), (.tree, true)]
    static let size = 100_000

    /// Files `f0`... of ``size`` bytes, at the top of the sandbox (operands) or in `s` (tree).
    static func makeFiles(_ count: Int, _ shape: Shape, in sandbox: Sandbox, size: Int = size) throws -> [String] {
        if shape == .tree { try sandbox.makeDirectory("s") }
        return try (0..<count).map { index in
            let name = "f\(index)"
            try sandbox.write(pattern(count: size, seed: UInt64(index)), to: (shape == .tree ? "s/" : "") + name)
            return name
        }
    }

    /// The command line for `shape`, with `--progress` or `--progress=json`; the destination
    /// directory of the files.
    static func command(_ shape: Shape, json: Bool, files: [String], extra: [String] = []) -> (arguments: [String], into: String) {
        let progress = json ? "--progress=json" : "--progress"
        switch shape {
        case .operands: return (["copy", progress] + extra + files + ["out/"], "out")
        case .tree: return (["copy", "-r", progress] + extra + ["s", "t"], "t/s")
        }
    }

    /// Checks the last progress line: in JSON, `filesCommitted`, `bytesCommitted`, an `error`
    /// and a fraction below 1; in text, `committed/total files` (never N/N), the committed
    /// bytes, and the ending's word.
    static func expectLastLine(
        _ stderr: String, json: Bool, committed: Int, of total: Int?, bytes: Int, word: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let lines = stderr.split(separator: "\n").map(String.init)
        if json {
            let last = try #require(try lines.filter { $0.hasPrefix("{") }.map(ProgressLine.init).last, sourceLocation: sourceLocation)
            #expect(last.isDone, "\(last.text)", sourceLocation: sourceLocation)
            #expect(last.object["filesCommitted"] as? Int == committed, "\(last.text)", sourceLocation: sourceLocation)
            #expect(last.object["bytesCommitted"] as? Int == bytes, "\(last.text)", sourceLocation: sourceLocation)
            #expect((last.object["fraction"] as? Double ?? 0) < 1, "\(last.text)", sourceLocation: sourceLocation)
            let error = last.object["error"] as? String
            #expect(error != nil && (word != "interrupted" || error == "interrupted"), "\(last.text)", sourceLocation: sourceLocation)
        } else {
            let last = try #require(lines.last { $0.hasPrefix("sluice: copy ") && $0.contains(" files") }, sourceLocation: sourceLocation)
            // `committed/total files`; a tree's walk stopped by a signal knows fewer files than
            // there are (total nil): still more than those committed.
            let counts = Self.fileCounts(last)
            #expect(counts.first == committed, "\(last)", sourceLocation: sourceLocation)
            #expect(counts.count == 2 && (total.map { counts[1] == $0 } ?? (counts[1] > committed)), "\(last)", sourceLocation: sourceLocation)
            #expect(last.hasSuffix(" committed, " + word), "\(last)", sourceLocation: sourceLocation)
            #expect(!last.contains("100%"), "\(last)", sourceLocation: sourceLocation)
            #expect(last.contains(ProgressDisplay.formatBytes(Int64(bytes)) + " of "), "\(last)", sourceLocation: sourceLocation)
        }
    }

    /// The numbers of a plain progress line's `k/N files` (only `k` while the total grows: `k/N+`).
    static func fileCounts(_ line: String) -> [Int] {
        line.split(separator: " ").first { $0.contains("/") && !$0.contains("'") }?.split(separator: "/").compactMap { Int($0) } ?? []
    }

    /// A file the destination already has (no `--force`) fails; the two others are committed.
    @Test(arguments: cases)
    func aFailedFileEndsWithWhatWasCommitted(_ shape: Shape, _ json: Bool) async throws {
        let sandbox = try Sandbox()
        let files = try Self.makeFiles(3, shape, in: sandbox)
        let (arguments, into) = Self.command(shape, json: json, files: files)
        try sandbox.makeDirectory(shape == .tree ? "t" : "out")
        if shape == .tree { try sandbox.makeDirectory("t/s") }
        try sandbox.write("old", to: into + "/f1")
        let result = try await CLI.run(arguments, in: sandbox)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(sandbox.text(into + "/f1") == "old")
        try Self.expectLastLine(result.stderr, json: json, committed: 2, of: 3, bytes: 2 * Self.size, word: "failed")
    }

    /// SIGINT once some files are committed and others are not: the last line counts the ones
    /// in place after the exit. Several operands: a FIFO with no writer holds the operation
    /// open after the files before and after it were committed. A tree: its files go one at a
    /// time at a limited rate, and the signal comes once two are in place.
    @Test(arguments: cases)
    func aSignalEndsWithWhatWasCommitted(_ shape: Shape, _ json: Bool) async throws {
        let sandbox = try Sandbox()
        var files = try Self.makeFiles(shape == .tree ? 20 : 3, shape, in: sandbox, size: shape == .tree ? 64 << 10 : Self.size)
        var extra: [String] = []
        if shape == .operands {
            try sandbox.makeFIFO("p")
            try sandbox.makeDirectory("out")
            files.insert("p", at: 2)
        } else {
            extra = ["-j", "1", "--limit-rate", "256K"]
        }
        let (arguments, into) = Self.command(shape, json: json, files: files, extra: extra)
        if shape == .tree { try sandbox.makeDirectory("t") }
        let process = try CLI.start(arguments, in: sandbox)
        let wanted = shape == .tree ? 2 : 3
        // The files' final names appear at their commit points (the rename). Watched, and the
        // signal sent, on a thread of the test's own: a wait for the cooperative pool between
        // seeing the files and signalling would let the copy run on. A hang guard of 60 s, far
        // beyond the 0.5 s the tree's two files take.
        let pid = process.pid
        _ = await onThread {
            let deadline = ContinuousClock.now + .seconds(60)
            while sandbox.listing(into).filter({ $0.hasPrefix("f") }).count < wanted && ContinuousClock.now < deadline {
                usleep(1_000)
            }
            return kill(pid, SIGINT)
        }
        let result = await process.finish()
        let stderr = result.stderr
        #expect(result.status == 130, "\(stderr)")
        let committed = sandbox.listing(into).filter { $0.hasPrefix("f") }
        let size = shape == .tree ? 64 << 10 : Self.size
        try #require(committed.count < files.count, "every file was committed before the signal")
        #expect(sandbox.leftovers(into).isEmpty)
        try Self.expectLastLine(
            stderr, json: json, committed: committed.count, of: shape == .tree ? nil : files.count, bytes: committed.count * size,
            word: "interrupted")
    }

    /// A destination with room for one file of two (a tmpfs of 1 MiB, in a mount namespace of
    /// its own): the second fails with `ENOSPC`, nothing of it is left, and the last line
    /// counts the first; `bytesWritten` is what was written, not the total.
    @Test(arguments: cases)
    func aFullDiskEndsWithWhatWasCommitted(_ shape: Shape, _ json: Bool) async throws {
        let sandbox = try Sandbox()
        let probe = try await CLI.shell("mkdir probe && unshare -m mount -t tmpfs -o size=1M none probe 2>&1", in: sandbox)
        if probe.status != 0 {
            try Test.cancel(Comment(rawValue: "unshare -m and mount -t tmpfs are not permitted here: \(probe.stdoutText)"))
        }
        let size = 700 << 10
        let files = try Self.makeFiles(2, shape, in: sandbox, size: size)
        let (arguments, into) = Self.command(shape, json: json, files: files, extra: ["-j", "1", "--no-fsync"])
        let mountPoint = shape == .tree ? "t" : "out"
        let line = arguments.joined(separator: " ")
        let result = try await CLI.shell(
            """
            mkdir \(mountPoint) && unshare -m sh -c '
                mount -t tmpfs -o size=1M none \(mountPoint) || exit 3
                "$SLUICE" \(line) 2> err; echo $? > status
                ls -A \(into) > listing'
            """, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        let stderr = sandbox.text("err") ?? ""
        #expect(sandbox.text("status") == "1\n", "\(stderr)")
        // One of the two (a tree's walk may take either first).
        let listing = sandbox.text("listing") ?? ""
        #expect(listing == "f0\n" || (shape == .tree && listing == "f1\n"), "\(listing)")
        try Self.expectLastLine(stderr, json: json, committed: 1, of: 2, bytes: size, word: "failed")
        if json, let last = try stderr.split(separator: "\n").filter({ $0.hasPrefix("{") }).map({ try ProgressLine(String($0)) }).last {
            #expect((last.object["bytesWritten"] as? Int ?? .max) < 1 << 20, "\(last.text)")
        }
    }

    /// On a terminal, the bar's last line says the same: committed of the total, and why it
    /// ended, in place of the rate.
    @Test func theBarsLastLineSaysFailed() async throws {
        let sandbox = try Sandbox()
        let files = try Self.makeFiles(3, .operands, in: sandbox)
        try sandbox.makeDirectory("out")
        try sandbox.write("old", to: "out/f1")
        let terminal = try PseudoTerminal(columns: 100)
        let process = try CLI.start(
            ["copy", "--progress"] + files + ["out/"], in: sandbox, stdout: .null, stderr: .descriptor(terminal.terminal))
        terminal.closeTerminal()
        let text = await terminal.readToEnd()
        let result = await process.finish()
        #expect(result.status == 1)
        let last = try #require(redraws(text).last { $0.hasPrefix("copy 3 files") }, "\(text)")
        #expect(last.contains("2/3 files"), "\(last)")
        #expect(last.hasSuffix(" committed  failed"), "\(last)")
        #expect(!last.contains("100%") && !last.contains("/s"), "\(last)")
    }
}
