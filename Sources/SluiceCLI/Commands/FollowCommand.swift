import Sluice

/// `sluice follow <file> (-o <dst> | -c)`: ships a file that is still being written, through
/// every rotation of its name, as `tail -F` reads it, losing nothing silently
/// (``FollowedFile``); appends to `<dst>` in place (``AppendingFileSink``) or writes standard
/// output.
enum FollowCommand {
    static let help = HelpText(
        command: .follow,
        overview: "Ship a file that is still being written, through every rotation, losing nothing silently.",
        discussion: [
            "Reads <file> from its first byte (--from-end: from its end) and then what is appended, as tail -F, until "
                + "SIGINT or SIGTERM (after the bytes read are written) or --until-idle. A new file at the name (rename "
                + "and create, delete and re-create) is opened at once and read after the current one has been idle "
                + "for 250 ms; a truncation (copytruncate) is read from the copy beside it. Bytes that cannot be shipped "
                + "are reported, never skipped silently: exit 2 at --until-idle.",
            "<dst> grows in place, written at explicit offsets; it is fsynced when the command ends (unless --no-fsync). "
                + "An existing <dst> is refused unless --append.",
        ],
        usage: ["[<options>] <file> -o <dst>", "[<options>] <file> -c"],
        arguments: [.init(label: "<file>", abstract: "the file to follow; one that does not exist yet is waited for")])

    /// Checks the command line, then follows the file until a signal or `--until-idle`.
    ///
    /// - Returns: the exit status (README, "Exit status").
    /// - Throws: ``UsageError`` before anything is read.
    static func run(_ arguments: ParsedArguments) async throws(UsageError) -> Int32 {
        guard arguments.operands.count == 1, let file = arguments.operands.first else {
            throw UsageError(arguments.operands.isEmpty ? "missing file operand" : "follow takes one file")
        }
        let output = arguments.path(.output)
        guard (output != nil) != arguments.has(.standardOutput) else {
            throw UsageError(output == nil ? "missing -o <dst> or -c" : "-o and -c cannot be used together")
        }
        if file == "-" { throw UsageError("follow reads a file by name, not standard input") }
        let quiet = arguments.has(.quiet)
        let options = FollowedFile.Options(startsAtEnd: arguments.has(.fromEnd), idleTimeout: arguments.duration(.untilIdle))
        let mode: ProgressMode = arguments.has(.progress) ? (arguments.choice(.progress) == "json" ? .json : .human) : .none
        let destination = Destination(
            path: output.flatMap { $0 == "-" ? nil : $0 }, appending: arguments.has(.append), synchronizes: !arguments.has(.noFsync))
        return await follow(file, to: destination, options: options, quiet: quiet, mode: mode)
    }

    /// Where the bytes go: a file (`nil`: standard output), appended to if it exists, synced at the end.
    private struct Destination {
        var path: Pathname?
        var appending: Bool
        var synchronizes: Bool
    }

    private static func follow(
        _ file: Pathname, to destination: Destination, options: FollowedFile.Options, quiet: Bool, mode: ProgressMode
    ) async -> Int32 {
        let output = destination.path
        if let output, !destination.appending, (try? FileStatus.of(output)) != nil {
            Console.message(FileError.open(path: output, errno: .fileExists).description + " (use --append to append to it)")
            return ExitStatus.failure
        }
        let followed: FollowedFile
        do {
            followed = try await FollowedFile.open(file, options: options) { event in
                // A removed name is said by what follows it (a rotation, or nothing new).
                if case .nameRemoved = event { return }
                if !quiet || isLoss(event) { Console.message(event.description) }
            }
        } catch {
            Console.message(error.description)
            return ExitStatus.failure
        }
        // Read, and write, on the follower's thread: a chunk is written where it was read.
        let executor = followed.preferredExecutor
        return await withTaskExecutorPreference(executor) {
            let sink: any ChunkSink
            do throws(FileError) {
                if let output {
                    let file = try AppendingFileSink.open(output, appending: destination.appending, executor: executor)
                    followed.exclude(file.identity)  // never its own output, when beside the followed file
                    sink = file
                } else {
                    sink = DescriptorSink()
                }
            } catch {
                Console.message(error.code == .alreadyExists ? error.description + " (use --append to append to it)" : error.description)
                return ExitStatus.failure
            }
            return await ship(followed, to: sink, destination: destination, file: file, mode: mode)
        }
    }

    /// Writes every chunk of `followed` to `sink` until the end (idle), a signal or a failure.
    private static func ship(
        _ followed: FollowedFile, to sink: any ChunkSink, destination: Destination, file: Pathname, mode: ProgressMode
    ) async -> Int32 {
        let progress = FollowProgress(followed, file: file, mode: mode)
        var failure: String?
        do {
            for try await piece in followed { try await sink.write(piece.chunk) }
            if destination.synchronizes { try await sink.commit() }
        } catch is CancellationError {
            if destination.synchronizes { try? await sink.commit() }
        } catch let error as FileError where error.code == .closed && destination.path == nil {
            await progress.end(error: "broken pipe")
            return ExitStatus.brokenPipe
        } catch {
            failure = "\(error)"
            Console.message(failure!)
        }
        await progress.end(error: failure ?? (Task.isCancelled ? "interrupted" : nil))
        if Task.isCancelled { return ExitStatus.interrupted }
        if failure != nil { return ExitStatus.failure }
        let counts = followed.statistics
        return counts.lostBytes > 0 || counts.uncountedLosses > 0 ? ExitStatus.warning : ExitStatus.success
    }

    /// Whether `event` reports bytes not shipped (said even with `--quiet`).
    private static func isLoss(_ event: FollowedFile.Event) -> Bool {
        if case .lost = event { return true }
        return false
    }
}
