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
    static let help = HelpText(
        overview: "Copy and compress files as streams of chunks with lossless backpressure.",
        usage: ["sluice <command> [options] ..."],
        arguments: [
            ("copy", "copy files (sluice copy --help)"),
            ("compress", "compress files to gzip (sluice compress --help)"),
            ("decompress", "decompress gzip files (sluice decompress --help)"),
            ("bench", "measure memory and speed of the designs (sluice bench --help)"),
            ("help <command>", "the same as sluice <command> --help"),
        ],
        options: [("-h, --help", "show this help"), ("--version", "show the version")],
        discussion: """
            Exit status: 0 success, 1 failure, 2 success with a warning, 64 bad usage,
            130 interrupted (SIGINT), 143 terminated (SIGTERM; 129 SIGHUP, 131 SIGQUIT),
            141 reader of standard output went away. A signal aborts a file not yet renamed into
            place; a file written before it stays and is named.
            """,
        argumentsTitle: "COMMANDS")

    /// The commands `sluice help CMD` and the usage hint know by name.
    static let commands = ["copy", "compress", "decompress", "bench"]

    /// Synchronous on purpose: an `async` `main` hands the main thread to `dispatch_main()`,
    /// which clears that thread's signal mask, and an unblocked thread would take a signal the
    /// commit gate must see pending. Here the main thread blocks the signals first, before any
    /// other thread exists (every thread inherits the mask), and then only waits.
    static func main() {
        SignalWatcher.blockSignals()
        let arguments = (1..<Int(CommandLine.argc)).map { index in
            FilePath(cString: CommandLine.unsafeArgv[index]!).bytes
        }
        reserveStandardDescriptors()
        let watcher = SignalWatcher(gate: .shared)
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

    static func run(_ arguments: [[UInt8]]) async -> Int32 {
        guard let first = arguments.first else {
            Console.writeError(help.render())
            return ExitStatus.usage
        }
        let name = String(decoding: first, as: UTF8.self)
        let rest = Array(arguments.dropFirst())
        do throws(UsageError) {
            switch name {
            case "copy": return try await CopyCommand.run(rest)
            case "compress": return try await GzipCommand.run(.compress, rest)
            case "decompress": return try await GzipCommand.run(.decompress, rest)
            case "bench": return try await BenchCommand.run(rest)
            case "bench-run": return await BenchCommand.runChild(rest)
            case "bench-probe": return BenchCommand.runProbe(rest)
            case "help" where !rest.isEmpty:
                // `sluice help CMD` is `sluice CMD --help`.
                let command = String(decoding: rest[0], as: UTF8.self)
                guard commands.contains(command) else { throw UsageError("unknown command '\(command)'") }
                guard rest.count == 1 else { throw UsageError("help takes one command") }
                return await run([rest[0], Array("--help".utf8)])
            case "-h", "--help", "help":
                Console.writeOutput(help.render())
                return ExitStatus.success
            case "--version": return printVersion()
            default: throw UsageError("unknown command '\(name)'")
            }
        } catch {
            Console.message(error.message)
            let known = commands.contains(name)
            Console.writeError("See 'sluice \(known ? name + " " : "")--help'.\n")
            return ExitStatus.usage
        }
    }
}
