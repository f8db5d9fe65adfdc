#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// Writes every byte of `text` to `descriptor` (blocking; call it from ``onThread(_:)``).
func writeAll(_ text: String, to descriptor: Int32) -> Bool {
    Array(text.utf8).withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let count = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }
}

/// C19 and interruption: pipes, FIFOs, SIGINT and SIGTERM, ordered by the progress lines the
/// child writes, never by time.
@Suite(.timeLimit(.minutes(3)))
struct SignalTests {
    @Test func fifoFedInTwoPartsIsCopiedWithAnUnknownTotal() async throws {
        let sandbox = try Sandbox()
        try sandbox.makeFIFO("p")
        let process = try CLI.start(["copy", "--progress=json", "p", "out"], in: sandbox, errorPipe: true)
        // Blocks until sluice opens the FIFO for reading.
        let path = sandbox.path("p")
        let writer = await onThread { open(path, O_WRONLY | O_CLOEXEC) }
        try #require(writer >= 0)
        #expect(await onThread { writeAll("hello ", to: writer) })
        let first = try #require(await process.nextErrorLine())
        #expect(try ProgressLine(first).totalIsUnknown)
        #expect(await onThread { writeAll("world\n", to: writer) })
        close(writer)
        let result = await process.finish()
        #expect(result.status == 0)
        #expect(sandbox.text("out") == "hello world\n")
        let lines = try result.stderrLines.map(ProgressLine.init)
        let last = try #require(lines.last)
        #expect(last.isDone && last.fraction == 1.0 && last.integer("totalBytes") == 12)
        #expect(lines.dropLast().allSatisfy { $0.totalIsUnknown && $0.fraction == nil })
        #expect(sandbox.leftovers().isEmpty)
    }

    @Test(arguments: [(SIGINT, Int32(130)), (SIGTERM, Int32(143))])
    func signalWhileReadingASilentPipeCleansUp(signal: Int32, expectedStatus: Int32) async throws {
        let sandbox = try Sandbox()
        let input = try Pipe.make()
        // The test keeps the write end open and silent: sluice's read blocks.
        defer { input.closeWriteEnd() }
        let process = try CLI.start(
            ["copy", "--progress=json", "-", "out"], in: sandbox, stdin: .descriptor(input.readEnd), errorPipe: true)
        input.closeReadEnd()
        let first = try #require(await process.nextErrorLine())
        #expect(try ProgressLine(first).integer("bytesCompleted") == 0)
        let signalled = ContinuousClock.now
        process.send(signal: signal)
        let result = await process.finish()
        #expect(result.status == expectedStatus, "\(result.stderr)")
        #expect(result.signal == nil, "sluice must exit by itself after cleaning up")
        #expect(result.exited - signalled < .seconds(5))
        #expect(!sandbox.exists("out"))
        #expect(sandbox.leftovers().isEmpty, "\(sandbox.listing())")
        // A last progress line, if any, must not look like a success, and says why (C39).
        for line in try result.stderrLines.map(ProgressLine.init) where line.isDone {
            #expect(line.object["error"] as? String == "interrupted", "an interrupted copy ended with \(line.text)")
        }
    }

    @Test func signalWhileCopyingFromAPipeKeepsTheOldDestination() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("OLD", to: "out")
        let input = try Pipe.make()
        defer { input.closeWriteEnd() }
        let process = try CLI.start(
            ["copy", "--force", "--progress=json", "-", "out"], in: sandbox, stdin: .descriptor(input.readEnd),
            errorPipe: true)
        input.closeReadEnd()
        #expect(await onThread { writeAll("partial data", to: input.writeEnd) })
        _ = try #require(await process.nextErrorLine())
        process.send(signal: SIGINT)
        let result = await process.finish()
        #expect(result.status == 130)
        #expect(sandbox.text("out") == "OLD")
        #expect(sandbox.leftovers().isEmpty)
    }

    @Test func sigintWhileWaitingForAFIFOsWriterExits130() async throws {
        let sandbox = try Sandbox()
        try sandbox.makeFIFO("p")
        // The FIFO's open returns at once (O_NONBLOCK) and the wait for a writer is a poll(2)
        // that cancellation wakes: the first progress line says the copy is waiting.
        let process = try CLI.start(["copy", "--progress=json", "p", "out"], in: sandbox, errorPipe: true)
        let first = try #require(await process.nextErrorLine())
        #expect(try ProgressLine(first).integer("bytesCompleted") == 0)
        let signalled = ContinuousClock.now
        process.send(signal: SIGINT)
        let result = await process.finish()
        #expect(result.status == 130)
        #expect(result.signal == nil)
        #expect(result.exited - signalled < .seconds(5))
        #expect(sandbox.listing() == ["p"])
    }

    /// SIGINT while blocks are being compressed on two threads: exit 130, no output and no
    /// temporary file. The input pipe stays open, so the compression cannot end by itself.
    @Test func sigintDuringAParallelCompressLeavesNothing() async throws {
        let sandbox = try Sandbox()
        let input = try Pipe.make()
        defer { input.closeWriteEnd() }
        let process = try CLI.start(
            ["compress", "-p", "2", "-b", "32", "--progress=json", "-o", "out.gz", "-"], in: sandbox,
            stdin: .descriptor(input.readEnd), errorPipe: true)
        input.closeReadEnd()
        _ = try #require(await process.nextErrorLine())
        // Many blocks' worth: once the write returns, sluice has read all but a pipe's buffer of it.
        let data = String(decoding: mixedData(count: 2 << 20).map { $0 & 0x7F | 0x20 }, as: UTF8.self)
        #expect(await onThread { writeAll(data, to: input.writeEnd) })
        process.send(signal: SIGINT)
        let result = await process.finish()
        #expect(result.status == 130, "\(result.stderr)")
        #expect(result.signal == nil)
        #expect(!sandbox.exists("out.gz"))
        #expect(sandbox.leftovers().isEmpty, "\(sandbox.listing())")
    }
}
