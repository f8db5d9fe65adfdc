#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// `sluice follow --state`: restarts take up where the last durable point left off, and every
/// destination that cannot be taken up is refused before anything is read or written.
@Suite(.timeLimit(.minutes(3)))
struct FollowStateTests {
    typealias Follow = FollowCommandTests

    static func follow(_ arguments: [String], in sandbox: Sandbox) async throws -> CLIResult {
        try await CLI.run(["follow", "--state", "st", "app.log"] + arguments + ["--until-idle", "200ms"], in: sandbox)
    }

    /// Bytes written after the last durable point (never acknowledged) are cut off on restart,
    /// then read and written again: the destination holds each line once.
    @Test func aRestartCutsTheDestinationBackAndReadsOn() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(Follow.lines(1...1000), to: "app.log")
        let first = try await Self.follow(["-o", "out"], in: sandbox)
        #expect(first.status == 0, "\(first.stderr)")
        let state = try #require(sandbox.text("st"))
        #expect(state.hasPrefix("sluice-follow-state 1\nfile \(sandbox.root)/app.log\ndestination "), "\(state)")
        Follow.append("1001\n", to: sandbox.path("out"))  // as a crash leaves bytes written and not recorded
        Follow.append(Follow.lines(1001...2000), to: sandbox.path("app.log"))
        let second = try await Self.follow(["-o", "out"], in: sandbox)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(sandbox.text("out") == Follow.lines(1...2000))
    }

    /// A first run stopped before its first record leaves an empty state and an empty
    /// destination: the same command runs again, with nothing to refuse.
    @Test func aRunStoppedBeforeItsFirstRecordRunsAgain() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(Follow.lines(1...10), to: "app.log")
        try sandbox.write("", to: "st")
        try sandbox.write("", to: "out")
        let result = try await Self.follow(["-o", "out"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.text("out") == Follow.lines(1...10))
        try sandbox.write("kept\n", to: "other")
        let refused = try await CLI.run(["follow", "--state", "st2", "app.log", "-o", "other", "--until-idle", "100ms"], in: sandbox)
        #expect(refused.status == 1 && refused.stderr.contains("use --append"), "\(refused.stderr)")
        #expect(sandbox.text("other") == "kept\n")
        #expect(!sandbox.exists("st2"))  // a refused command leaves no state behind
    }

    /// A destination missing, replaced, or shorter than recorded: refused, nothing created or
    /// changed; a state of another file, or of another kind of output, too.
    @Test func whatCannotBeTakenUpIsRefused() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(Follow.lines(1...100), to: "app.log")
        #expect(try await Self.follow(["-o", "out"], in: sandbox).status == 0)
        let shipped = try #require(sandbox.contents("out"))
        let state = sandbox.contents("st")
        _ = rename(sandbox.path("out"), sandbox.path("saved"))
        let missing = try await Self.follow(["-o", "out"], in: sandbox)
        #expect(missing.status == 1 && missing.stderr.contains("was written to 'out', which is missing"), "\(missing.stderr)")
        #expect(!sandbox.exists("out"))
        try sandbox.write(shipped, to: "out")  // the same bytes in another file
        let replaced = try await Self.follow(["-o", "out"], in: sandbox)
        #expect(replaced.status == 1 && replaced.stderr.contains("which is another file now"), "\(replaced.stderr)")
        _ = rename(sandbox.path("saved"), sandbox.path("out"))  // the recorded file again
        _ = truncate(sandbox.path("out"), 10)
        let shorter = try await Self.follow(["-o", "out"], in: sandbox)
        #expect(shorter.status == 1 && shorter.stderr.contains("it was cut"), "\(shorter.stderr)")
        #expect(sandbox.contents("out")?.count == 10)
        let elsewhere = try await Self.follow(["-o", "other"], in: sandbox)
        #expect(elsewhere.status == 1 && elsewhere.stderr.contains("was written to 'out', not 'other'"), "\(elsewhere.stderr)")
        #expect(!sandbox.exists("other"))
        for (arguments, message) in [(["-c"], "give it with -o"), (["-z", "-o", "out"], "without -z")] {
            let result = try await Self.follow(arguments, in: sandbox)
            #expect(result.status == 1 && result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        try sandbox.write(Follow.lines(1...5), to: "other.log")
        let another = try await CLI.run(["follow", "--state", "st", "other.log", "-o", "out", "--until-idle", "100ms"], in: sandbox)
        #expect(another.status == 1 && another.stderr.contains("app.log', not '\(sandbox.root)/other.log'"), "\(another.stderr)")
        #expect(sandbox.contents("st") == state)
        for same in ["out", "app.log"] {
            let result = try await CLI.run(["follow", "--state", same, "app.log", "-o", "out", "--until-idle", "100ms"], in: sandbox)
            #expect(result.status == 1 && result.stderr.contains("give the state a file of its own"), "\(same): \(result.stderr)")
        }
        #expect(sandbox.contents("st") == state && sandbox.contents("out")?.count == 10)
    }

    /// A second follower on a state in use is refused; the first, interrupted, makes its last
    /// durable point: the state records the whole destination.
    @Test func aStateInUseIsRefusedAndAnInterruptRecordsTheEnd() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(Follow.lines(1...10), to: "app.log")
        let process = try CLI.start(
            ["follow", "--state", "st", "app.log", "-o", "out", "--progress=json", "--until-idle", "60s"], in: sandbox, errorPipe: true)
        #expect(await Follow.waitUntilShipped(21, process))
        let second = try await Self.follow(["-o", "out2"], in: sandbox)
        #expect(second.status == 1 && second.stderr.contains("another sluice follow is using this state"), "\(second.stderr)")
        #expect(!sandbox.exists("out2"))
        process.send(signal: SIGINT)
        let result = await process.finish()
        #expect(result.status == 130)
        #expect(sandbox.text("out") == Follow.lines(1...10))
        let state = try #require(sandbox.text("st"))
        #expect(state.contains("destination ") && state.contains(" 21 out\n"), "\(state)")
    }

    /// With -z each run ends its members: the destination is one valid gzip file after each
    /// run and after an interrupt, and it decodes to every line once.
    @Test func gzipOutputIsValidAtEveryDurablePoint() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(Follow.lines(1...5000), to: "app.log")
        #expect(try await Self.follow(["-z", "-p", "2", "-o", "out.gz"], in: sandbox).status == 0)
        Follow.append(Follow.lines(5001...6000), to: sandbox.path("app.log"))
        let process = try CLI.start(
            ["follow", "--state", "st", "-z", "-9", "app.log", "-o", "out.gz", "--progress=json"], in: sandbox, errorPipe: true)
        #expect(await Follow.waitUntilShipped(Follow.lines(5001...6000).utf8.count, process))  // this run's
        process.send(signal: SIGINT)
        #expect(await process.finish().status == 130)
        let decoded = try await CLI.run(["decompress", "-c", "out.gz"], in: sandbox)
        #expect(decoded.status == 0 && decoded.stdoutText == Follow.lines(1...6000))
        if let gzip = Tool.gzip {
            let tested = try await CLI.shell("\(gzip) -t out.gz", in: sandbox)
            #expect(tested.status == 0, "\(tested.stderr)")
        }
    }

    @Test func aLevelOrThreadsWithoutGzipIsAUsageError() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("x\n", to: "app.log")
        for arguments in [["-6"], ["-p", "2"]] {
            let result = try await CLI.run(["follow", "app.log", "-o", "out", "--until-idle", "100ms"] + arguments, in: sandbox)
            #expect(result.status == 64 && result.stderr.contains("add -z"), "\(arguments): \(result.stderr)")
        }
        #expect(!sandbox.exists("out"))
    }
}
