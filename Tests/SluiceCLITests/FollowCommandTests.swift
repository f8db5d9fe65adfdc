#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Sluice
import Testing

/// `sluice follow`: what a user runs, end to end, with real processes.
@Suite(.timeLimit(.minutes(3)))
struct FollowCommandTests {
    /// Appends `text` to `path`, opening and closing it as a logger that reopens does.
    static func append(_ text: String, to path: String) {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        precondition(descriptor >= 0, "open \(path)")
        _ = writeAll(text, to: descriptor)
        close(descriptor)
    }

    /// Lines `first...last`, one number each.
    static func lines(_ range: ClosedRange<Int>) -> String {
        range.map { "\($0)\n" }.joined()
    }

    /// The `bytesShipped` of a `--progress=json` line.
    static func shipped(_ line: String) -> Int? {
        guard let range = line.range(of: "\"bytesShipped\":") else { return nil }
        return Int(line[range.upperBound...].prefix { $0.isNumber })
    }

    /// Reads the progress lines until `bytes` were shipped; false if the command ended first.
    static func waitUntilShipped(_ bytes: Int, _ process: RunningProcess) async -> Bool {
        await firstShipped(atLeast: bytes, process) != nil
    }

    /// The first `bytesShipped` of at least `bytes` in the progress lines; nil if the command
    /// ended first.
    static func firstShipped(atLeast bytes: Int, _ process: RunningProcess) async -> Int? {
        while let line = await process.nextErrorLine() {
            if let shipped = shipped(line), shipped >= bytes { return shipped }
        }
        return nil
    }

    @Test func aFileIsShippedToItsEndThenStopsWhenIdle() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(Self.lines(1...1000), to: "app.log")
        let result = try await CLI.run(["follow", "app.log", "-o", "out", "--until-idle", "200ms"], in: sandbox)
        #expect(result.status == 0)
        #expect(sandbox.text("out") == Self.lines(1...1000))
        #expect(result.stderr.isEmpty)
    }

    @Test func anExistingDestinationIsAppendedToOnlyWithAppend() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("new\n", to: "app.log")
        try sandbox.write("kept\n", to: "out")
        let refused = try await CLI.run(["follow", "app.log", "-o", "out", "--until-idle", "100ms"], in: sandbox)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("use --append"))
        #expect(sandbox.text("out") == "kept\n")
        let appended = try await CLI.run(["follow", "app.log", "-o", "out", "--append", "--until-idle", "100ms"], in: sandbox)
        #expect(appended.status == 0)
        #expect(sandbox.text("out") == "kept\nnew\n")
    }

    @Test func standardOutputAndUsage() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("hello\n", to: "app.log")
        let result = try await CLI.run(["follow", "app.log", "-c", "--until-idle", "100ms"], in: sandbox)
        #expect(result.status == 0 && result.stdoutText == "hello\n")
        for arguments in [["follow", "app.log"], ["follow", "app.log", "-c", "-o", "x"], ["follow", "-c"],
            ["follow", "app.log", "-c", "--until-idle", "soon"]] {
            let usage = try await CLI.run(arguments, in: sandbox)
            #expect(usage.status == 64, "\(arguments)")
        }
    }

    /// A truncation with no copy beside it, while the follower is held back by its reader (a
    /// pipe nobody reads yet): the bytes it saw and had not read are reported lost, even with
    /// -q, and the status is 2.
    @Test func aLossIsReportedAndTheStatusIsTwo() async throws {
        let sandbox = try Sandbox()
        try sandbox.write([UInt8](repeating: UInt8(ascii: "a"), count: 8 << 20), to: "app.log")
        let pipe = try Pipe.make()
        let process = try CLI.start(
            ["follow", "app.log", "-c", "-q", "--progress=json", "--until-idle", "300ms"], in: sandbox,
            stdout: .descriptor(pipe.writeEnd), errorPipe: true)
        pipe.closeWriteEnd()
        // A first chunk is read (its progress line says so); its write waits for the pipe.
        let shippedFirst = try #require(await Self.firstShipped(atLeast: 1, process))
        try sandbox.write("x\n", to: "app.log")
        let drained = await onThread { () -> Int in
            var total = 0
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while case let count = buffer.withUnsafeMutableBytes({ read(pipe.readEnd, $0.baseAddress, $0.count) }), count > 0 {
                total += count
            }
            close(pipe.readEnd)
            return total
        }
        let result = await process.finish()
        #expect(result.status == 2)
        #expect(drained == shippedFirst + 2)
        #expect(result.stderr.contains("lost at least \((8 << 20) - shippedFirst) bytes"))
    }

    /// SIGINT while it waits: the bytes read are written, exit 130.
    @Test func anInterruptEndsItAfterTheBytesRead() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(Self.lines(1...10), to: "app.log")
        let process = try CLI.start(["follow", "app.log", "-o", "out", "--progress=json"], in: sandbox, errorPipe: true)
        #expect(await Self.waitUntilShipped(21, process))
        process.send(signal: SIGINT)
        let result = await process.finish()
        #expect(result.status == 130)
        #expect(sandbox.text("out") == Self.lines(1...10))
    }

    /// The live scenario: a writer appends numbered lines in batches of 50, reopening the file for
    /// each; every 10 batches the file is rotated, in turn by rename and create, by a shift and
    /// by delete and re-create (after what was written is shipped: a file deleted before anyone
    /// read it is gone for every follower). The destination holds every line once, in order.
    /// The writer's pace is the machine's: the order of each generation's bytes does not depend
    /// on it.
    @Test func everyLineOnceInOrderThroughEveryRotation() async throws {
        let sandbox = try Sandbox()
        let log = sandbox.path("app.log")
        Self.append(Self.lines(1...50), to: log)
        // --until-idle only as a hang guard: a line missing ends it instead of a wait for ever.
        let process = try CLI.start(["follow", "app.log", "-o", "out", "--progress=json", "--until-idle", "60s"], in: sandbox, errorPipe: true)
        var written = Self.lines(1...50).utf8.count
        // Running: it has the file open.
        #expect(await Self.waitUntilShipped(written, process))
        // The writer on a thread of its own: a busy cooperative pool never pauses it for as
        // long as the guard's idle time.
        await withTaskExecutorPreference(BlockingIOExecutor(label: "test.writer")) {
            for batch in 1..<90 {
                if batch % 10 == 0 {
                    switch (batch / 10) % 3 {
                    case 1: rename(log, sandbox.path("app.log.1"))
                    case 2:
                        rename(sandbox.path("app.log.1"), sandbox.path("app.log.2"))
                        rename(log, sandbox.path("app.log.1"))
                    default:
                        #expect(await Self.waitUntilShipped(written, process))
                        unlink(log)
                    }
                }
                let text = Self.lines(batch * 50 + 1...batch * 50 + 50)
                Self.append(text, to: log)
                written += text.utf8.count
            }
        }
        // Stopped once all is shipped (not by an idle time, which a loaded machine may reach).
        #expect(await Self.waitUntilShipped(written, process))
        process.send(signal: SIGINT)
        let result = await process.finish()
        #expect(result.status == 130)
        let losses = result.stderrLines.filter { $0.hasPrefix("sluice: ") && ($0.contains("lost") || $0.contains("counted")) }
        #expect(losses.isEmpty, "\(losses)")
        let out = sandbox.text("out") ?? ""
        let got = out.split(separator: "\n").map { Int($0) ?? -1 }
        let firstWrong = zip(got, 1...).first { $0 != $1 }.map { "line \($0.1) is \($0.0)" } ?? "none wrong"
        #expect(out == Self.lines(1...4500), "\(out.utf8.count) of \(written) bytes; \(firstWrong); \(result.stderr.suffix(600))")
    }
}
