#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Sluice
import Synchronization

/// The `sluice` command: parses the subcommand, runs it in a task that SIGINT, SIGTERM, SIGHUP
/// and SIGQUIT cancel (through the ``CommitGate``), and exits with the status of the README's
/// table.
@main
struct SluiceMain {
    /// The version `--version` prints.
    static let version = "0.3.0"

    /// The subcommands the help lists and `sluice help` knows, in that order.
    static let subcommands: [CommandName] = [.copy, .compress, .decompress, .follow, .bench]

    /// `sluice --help`: the subcommands, each with its own overview, and the exit statuses.
    static let help = HelpText(
        command: .sluice,
        overview: "Copy and compress files as streams of chunks with lossless backpressure.",
        discussion: [
            "Exit status: 0 success, 1 failure, 2 success with a warning, 64 bad usage, 130 interrupted (SIGINT), "
                + "143 terminated (SIGTERM; 129 SIGHUP, 131 SIGQUIT), 141 reader of standard output went away.",
            "A signal aborts a file not yet renamed into place; a file written before it stays and is named.",
        ],
        usage: ["<subcommand>"],
        subcommands: subcommands.map { HelpText.Row(label: $0.rawValue, abstract: help(for: $0).overview) }
            + [HelpText.Row(label: "help", abstract: "show the help of a subcommand, as sluice <subcommand> --help")])

    /// The help of `command`, whose usage its usage errors show too.
    static func help(for command: CommandName) -> HelpText {
        switch command {
        case .sluice: help
        case .copy: CopyCommand.help
        case .compress: GzipCommand.help(.compress)
        case .decompress: GzipCommand.help(.decompress)
        case .follow: FollowCommand.help
        case .bench: BenchCommand.help
        case .benchRun: BenchCommand.childHelp
        }
    }

    /// Synchronous on purpose: an `async` `main` hands the main thread to `dispatch_main()`,
    /// which clears that thread's signal mask, and an unblocked thread would take a signal the
    /// commit gate must see pending. Here the main thread blocks the signals first, before any
    /// other thread exists (every thread inherits the mask), and then only waits.
    static func main() {
        SignalWatcher.blockSignals()
        let arguments = (1..<Int(CommandLine.argc)).map { index in
            Pathname(cString: CommandLine.unsafeArgv[index]!).bytes
        }
        reserveStandardDescriptors()
        // follow's last durable point (a member's end, fsync, the state) may take seconds to
        // write what a sync interval gathered: it is given them; a second signal still exits.
        let watcher = SignalWatcher(gate: .shared, gracePeriod: arguments.first == Array("follow".utf8) ? 30 : 0.5)
        let finished = DispatchSemaphore(value: 0)
        let result = Mutex<Int32>(ExitStatus.failure)
        // The command's own code (stat, unlink, messages on standard error) runs on a thread of
        // its own, never on the cooperative pool; the pipeline's stages choose their own.
        let command = Task.detached(executorPreference: BlockingIOExecutor(label: "sluice.command")) {
            let status = await run(arguments)
            result.withLock { $0 = status }
            finished.signal()
        }
        CommitGate.shared.setInterruptionHandler { _ in
            command.cancel()
            watcher.startGracePeriod()
        }
        finished.wait()
        let status = result.withLock { $0 }
        exit(status == ExitStatus.interrupted
            // Stopped by a signal: 128 + its number (130 for SIGINT), after cleaning up. A
            // signal that came after the work was done does not change the status.
            ? ExitStatus.signal(CommitGate.shared.interruption ?? SIGINT) : status)
    }

    /// If standard input, output or error is closed, holds its number with `/dev/null` opened
    /// the wrong way round, so no file Sluice opens lands on descriptor 0, 1 or 2 (and is then
    /// written as "standard output"), and a read or write there fails with `EBADF` as it should.
    static func reserveStandardDescriptors() {
        for (descriptor, flags) in [(Int32(0), O_WRONLY), (1, O_RDONLY), (2, O_RDONLY)] where fcntl(descriptor, F_GETFD) == -1 {
            let opened = open("/dev/null", flags)
            if opened >= 0 && opened != descriptor {
                dup2(opened, descriptor)
                close(opened)
            }
        }
    }

    /// Runs the command line `arguments` (without the program's name) and returns the exit
    /// status. Every usage error is printed here, with the usage of the command it concerns.
    static func run(_ arguments: [[UInt8]]) async -> Int32 {
        guard let first = arguments.first else {
            Console.writeError(help.render())
            return ExitStatus.usage
        }
        let name = String(decoding: first, as: UTF8.self)
        let rest = Array(arguments.dropFirst())
        // `compress -d` is `decompress`: its usage errors show decompress's usage.
        let command = CommandName(subcommand: name).map { ParsedArguments.command(of: rest, given: $0) }
        do throws(UsageError) {
            if let command { return try await run(command, rest) }
            switch name {
            case "bench-probe": return BenchCommand.runProbe(rest)
            case "help": return try await runHelp(rest)
            case "-", "--": throw UsageError("unknown command '\(name)'")
            case _ where name.hasPrefix("-"): return try await run(.sluice, arguments)
            default:
                throw UsageError.withSuggestion(
                    "unknown command '\(name)'", typed: name, candidates: subcommands.map(\.rawValue) + ["help"])
            }
        } catch {
            Console.writeError(help(for: command ?? .sluice).usageError(error))
            return ExitStatus.usage
        }
    }

    /// Parses `arguments` for `command` (or the command an option switches it to), answers
    /// `--help`, `--version` and the installation's generators, else runs it.
    static func run(_ command: CommandName, _ arguments: [[UInt8]]) async throws(UsageError) -> Int32 {
        let parsed = try ParsedArguments(arguments, for: command)
        if parsed.has(.help) {
            Console.writeOutput(help(for: parsed.command).render())
            return ExitStatus.success
        }
        if parsed.has(.version) {
            Console.writeOutput("sluice \(version) (zlib \(Zlib.version))\n")
            return ExitStatus.success
        }
        switch parsed.command {
        case .sluice:
            if let shell = parsed.choice(.generateCompletionScript) {
                Console.writeOutput(CompletionScript(shell: shell).render())
                return ExitStatus.success
            }
            if parsed.has(.generateManual) {
                Console.writeOutput(ManualPage().render())
                return ExitStatus.success
            }
            throw UsageError("missing subcommand")
        case .copy: return try await CopyCommand.run(parsed)
        case .follow: return try await FollowCommand.run(parsed)
        case .compress: return try await GzipCommand.run(.compress, parsed)
        case .decompress: return try await GzipCommand.run(.decompress, parsed)
        case .bench: return try await BenchCommand.run(parsed)
        case .benchRun: return try await BenchCommand.runChild(parsed)
        }
    }

    /// `sluice help` is `sluice --help`; `sluice help CMD` is `sluice CMD --help`.
    static func runHelp(_ arguments: [[UInt8]]) async throws(UsageError) -> Int32 {
        guard let first = arguments.first else { return try await run(.sluice, [Array("--help".utf8)]) }
        let name = String(decoding: first, as: UTF8.self)
        guard let command = CommandName(subcommand: name), subcommands.contains(command) else {
            throw UsageError.withSuggestion("unknown command '\(name)'", typed: name, candidates: subcommands.map(\.rawValue))
        }
        guard arguments.count == 1 else { throw UsageError("help takes one command") }
        return try await run(command, [Array("--help".utf8)])
    }
}
