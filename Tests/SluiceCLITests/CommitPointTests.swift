#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// C28 and C29 end to end, with real signals: a signal taken before a file's rename aborts it
/// (old bytes, no temporary, 128 + N); one taken after the rename leaves the file written and
/// says so, with the same status. The in-process tests of both orders are `CommitGateTests`.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct CommitPointTests {
    /// C28, the `pv | sluice copy - out` order: the signal is generated, then the input ends (the
    /// upstream died of the same Ctrl-C). Whichever thread takes the signal, nothing is committed.
    @Test(arguments: [(SIGINT, Int32(130)), (SIGTERM, Int32(143)), (SIGHUP, Int32(129)), (SIGQUIT, Int32(131))])
    func aSignalThenTheEndOfInputCommitsNothing(signal: Int32, expectedStatus: Int32) async throws {
        for _ in 0..<5 {
            let sandbox = try Sandbox()
            try sandbox.write("OLD", to: "out")
            let input = try Pipe.make()
            let process = try CLI.start(
                ["copy", "--force", "--progress=json", "-", "out"], in: sandbox, stdin: .descriptor(input.readEnd),
                errorPipe: true)
            input.closeReadEnd()
            #expect(await onThread { writeAll(String(repeating: "data ", count: 1000), to: input.writeEnd) })
            _ = try #require(await process.nextErrorLine())
            process.send(signal: signal)
            input.closeWriteEnd()
            let result = await process.finish()
            #expect(result.status == expectedStatus, "\(result.stderr)")
            #expect(sandbox.text("out") == "OLD")
            #expect(sandbox.leftovers().isEmpty, "\(sandbox.listing())")
        }
    }

    /// Whether `strace` can slow an `fsync(2)` here and the test can see it (`/proc/PID/syscall`
    /// of a traced process needs root).
    static let canTraceFsync = FileManager.default.isExecutableFile(atPath: "/usr/bin/strace") && geteuid() == 0

    /// `nohup sluice copy - out`: a SIGHUP the process was started with ignored stays ignored
    /// (blocking it would have made the signalfd take it), and the copy completes.
    @Test func aSignalIgnoredAtStartStaysIgnored() async throws {
        let sandbox = try Sandbox()
        let input = try Pipe.make()
        let process = try CLI.start(
            program: "nohup", ["$SLUICE", "copy", "--progress=json", "-", "out"], in: sandbox,
            stdin: .descriptor(input.readEnd), errorPipe: true)
        input.closeReadEnd()
        #expect(await onThread { writeAll("hello ", to: input.writeEnd) })
        _ = try #require(await process.nextErrorLine())
        process.send(signal: SIGHUP)
        #expect(await onThread { writeAll("world\n", to: input.writeEnd) })
        input.closeWriteEnd()
        let result = await process.finish()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.text("out") == "hello world\n")
    }

    /// C28's recipe as a user meets it: `pv -q -L RATE big | sluice copy - out`, and SIGINT to the
    /// whole process group (Ctrl-C) once the copy has started. pv dies of it and ends the input;
    /// sluice must exit 130 and commit nothing, every time.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/pv"), "pv is not installed (apt-get install pv)"))
    func ctrlCToAPipelineFromPvCommitsNothing() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(Array(repeating: 0x61, count: 64 << 20), to: "big")
        for run in 0..<10 {
            // A process group of its own (setsid), whose shell survives the Ctrl-C (a handler,
            // not an ignore: its children start with the default action) to record the status.
            unlink(sandbox.path("err"))
            unlink(sandbox.path("status"))
            unlink(sandbox.path("out"))  // a failed run's file must not fail the next one
            // 10 MB/s: the 64 MiB take 6.7 s, so the signal lands mid-copy even when this
            // process is slow to send it (under ThreadSanitizer, on a loaded machine).
            let script = "trap : INT; pv -q -L 10m big | '\(CLI.binary)' copy --progress=json - out 2>err; echo $? > status"
            let group = try CLI.start(program: "setsid", ["sh", "-c", script], in: sandbox)
            #expect(await onThread { Self.waitForContent(sandbox.path("err")) }, "run \(run): sluice never started")
            kill(-group.pid, SIGINT)
            _ = await group.finish()
            #expect(sandbox.text("status") == "130\n", "run \(run): \(sandbox.text("err") ?? "")")
            #expect(!sandbox.exists("out"), "run \(run) committed a short file")
            #expect(sandbox.leftovers().isEmpty, "\(sandbox.listing())")
        }
    }

    /// Polls (every 10 ms, up to 20 s) until the file at `path` is not empty.
    static func waitForContent(_ path: String) -> Bool {
        for _ in 0..<2000 {
            if let size = try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int, size > 0 { return true }
            usleep(10_000)
        }
        return false
    }

    /// `strace` that delays the `n`th `fsync(2)` of `sluice copy --force big out` by `seconds`,
    /// started in `sandbox`, and the traced `sluice`'s process id once one of its threads is
    /// inside that `fsync`.
    static func copyWithSlowFsync(number: Int, seconds: Int, in sandbox: Sandbox) async throws -> (RunningProcess, pid_t) {
        // The first fsync is the temporary file's (unnamed: `<root>/#<inode> (deleted)`; or
        // named), the second the directory's.
        let root = URL(fileURLWithPath: sandbox.root).resolvingSymlinksInPath().path
        let isTarget: @Sendable (String) -> Bool = { path in
            guard number == 1 else { return path == root }
            return path.contains("/.sluice-") || (path.hasPrefix(root + "/#") && path.hasSuffix(" (deleted)"))
        }
        let process = try CLI.start(
            program: "strace",
            // LeakSanitizer cannot run under ptrace: in an AddressSanitizer build it would fail
            // the traced sluice at exit; its leak check is off for this child only.
            ["-f", "-qq", "-o", "/dev/null", "-E", "ASAN_OPTIONS=detect_leaks=0", "-e", "trace=fsync",
             "-e", "inject=fsync:delay_enter=\(seconds * 1_000_000):when=\(number)",
             "$SLUICE", "copy", "--force", "big", "out"],
            in: sandbox)
        guard let traced = await onThread({ waitForFsync(under: process.pid, of: isTarget) }) else {
            process.send(signal: SIGKILL)
            let result = await process.finish()
            throw SpawnError(program: "strace (no fsync seen): \(result.stderr)", code: 0)
        }
        return (process, traced)
    }

    /// The `fsync` system call's number on this machine.
    static var fsyncNumber: Int {
        #if arch(x86_64)
        return 74
        #else
        return 82  // aarch64
        #endif
    }

    /// Polls (every 10 ms, up to 20 s) until a thread of the child of `tracer` is inside
    /// `fsync(2)` (`/proc/PID/task/TID/syscall`) of a file whose path `isTarget` accepts; returns
    /// the child's process id.
    static func waitForFsync(under tracer: pid_t, of isTarget: @escaping @Sendable (String) -> Bool) -> pid_t? {
        for _ in 0..<2000 {
            if let children = try? String(contentsOfFile: "/proc/\(tracer)/task/\(tracer)/children", encoding: .utf8),
                let child = children.split(separator: " ").first.flatMap({ pid_t($0) }),
                let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(child)/task") {
                for thread in threads {
                    let fields = ((try? String(contentsOfFile: "/proc/\(child)/task/\(thread)/syscall", encoding: .utf8)) ?? "")
                        .split(separator: " ")
                    guard fields.count > 1, fields[0] == Substring("\(fsyncNumber)"),
                        let descriptor = Int(fields[1].dropFirst(2), radix: 16),
                        let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(child)/fd/\(descriptor)")
                    else { continue }
                    // An fsync that is not the delayed one can be seen while it runs: match its file.
                    if isTarget(target) { return child }
                }
            }
            usleep(10_000)
        }
        return nil
    }

    /// Polls (every 10 ms, up to 20 s) until `pid` has exited (a zombie, or gone); returns when.
    static func waitForExit(_ pid: pid_t) -> ContinuousClock.Instant {
        for _ in 0..<2000 {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let state = stat.split(separator: ")").last?.split(separator: " ").first, state != "Z", state != "X"
            else { break }
            usleep(10_000)
        }
        return .now
    }

    /// C28, the second order: SIGINT while the commit waits on the file's `fsync(2)`, just before
    /// the rename. The watchdog removes the temporary and exits 130; the destination is untouched.
    @Test(.enabled(if: canTraceFsync, "needs strace and root (to read /proc/PID/syscall of a traced process)"))
    func aSignalDuringTheFinalFsyncCommitsNothing() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(Array(repeating: 7, count: 1 << 20), to: "big")
        try sandbox.write("OLD", to: "out")
        let (process, traced) = try await Self.copyWithSlowFsync(number: 1, seconds: 8, in: sandbox)
        let signalled = ContinuousClock.now
        kill(traced, SIGINT)
        // strace itself waits out the delay; sluice must not.
        let exited = await onThread { Self.waitForExit(traced) }
        #expect(exited - signalled < .seconds(4), "the watchdog must not wait for the file's fsync")
        let result = await process.finish()
        #expect(result.status == 130, "\(result.stderr)")
        #expect(sandbox.text("out") == "OLD")
        #expect(sandbox.leftovers().isEmpty, "\(sandbox.listing())")
    }

    /// C29: SIGTERM while the directory is synced after the rename. The file is committed: it
    /// holds the new bytes, the message names it, and the status is still 143.
    @Test(.enabled(if: canTraceFsync, "needs strace and root (to read /proc/PID/syscall of a traced process)"))
    func aSignalAfterTheRenameNamesTheWrittenDestination() async throws {
        let sandbox = try Sandbox()
        let data = [UInt8]((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try sandbox.write(data, to: "big")
        try sandbox.write("OLD", to: "out")
        let (process, traced) = try await Self.copyWithSlowFsync(number: 2, seconds: 3, in: sandbox)
        // The rename is done: the directory's fsync is the second one.
        #expect(sandbox.contents("out") == data)
        kill(traced, SIGTERM)
        let result = await process.finish()
        #expect(result.status == 143, "\(result.stderr)")
        #expect(result.stderr.contains("'out' was written before the interruption"), "\(result.stderr)")
        #expect(sandbox.contents("out") == data)
        #expect(sandbox.leftovers().isEmpty, "\(sandbox.listing())")
    }
}
