import Sluice

/// `sluice follow <file> (-o <dst> | -c)`: ships a file that is still being written, through
/// every rotation of its name, as `tail -F` reads it, losing nothing silently
/// (``FollowedFile``); appends to `<dst>` in place (``AppendingFileSink``) or writes standard
/// output, raw or gzip-compressed, with a durable point every `--sync-interval`
/// (``FollowShipment``); with `--state`, exactly once through crashes and restarts.
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
            "<dst> grows in place. At most --sync-interval after a write, a durable point makes it durable (fsync, "
                + "unless --no-fsync) and, with -z, ends the gzip member, so <dst> is a valid gzip file at each. An "
                + "existing <dst> is refused unless --append.",
            "With --state, each durable point also records where reading stands and the length of <dst> that holds "
                + "it; run the same command again after a crash and it cuts <dst> back to that length and reads on "
                + "from there, through the rotations it missed: nothing lost, nothing repeated. To standard output "
                + "(-c) the promise is at least once. Without --state, nothing is resumed: a follower that stops "
                + "starts again.",
        ],
        usage: ["[<options>] <file> -o <dst>", "[<options>] <file> -c"],
        arguments: [.init(label: "<file>", abstract: "the file to follow; one that does not exist yet is waited for")])

    /// What the command line asks.
    struct Request {
        var file: Pathname
        /// The destination file; `nil`: standard output.
        var output: Pathname?
        var appending: Bool
        var statePath: Pathname?
        var options: FollowedFile.Options
        var shipment: FollowShipment.Options
        var quiet: Bool
        var mode: ProgressMode
    }

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
        var shipment = FollowShipment.Options()
        shipment.synchronizes = !arguments.has(.noFsync)
        shipment.syncInterval = arguments.duration(.syncInterval) ?? shipment.syncInterval
        if arguments.has(.gzipOutput) {
            let level = arguments.integer(.level).flatMap(CompressionLevel.init(exactly:)) ?? .default
            shipment.compression = (level, arguments.integer(.threads) ?? ProcessorAffinity.availableProcessorCount())
        } else if arguments.has(.level) || arguments.has(.threads) {
            throw UsageError("a compression level and -p apply to gzip output: add -z")
        }
        let request = Request(
            file: file, output: output.flatMap { $0 == "-" ? nil : $0 }, appending: arguments.has(.append),
            statePath: arguments.path(.state),
            options: FollowedFile.Options(startsAtEnd: arguments.has(.fromEnd), idleTimeout: arguments.duration(.untilIdle)),
            shipment: shipment, quiet: arguments.has(.quiet),
            mode: arguments.has(.progress) ? (arguments.choice(.progress) == "json" ? .json : .human) : .none)
        return await follow(request)
    }

    private static func follow(_ request: Request) async -> Int32 {
        let resumed: Resumption
        do { resumed = try Resumption.take(request) } catch {
            Console.message("\(error)")
            return ExitStatus.failure
        }
        var options = request.options
        options.excluded = resumed.excluded
        let quiet = request.quiet
        let followed: FollowedFile
        do {
            followed = try await FollowedFile.open(request.file, resumingFrom: resumed.state?.checkpoint, options: options) { event in
                // A removed name is said by what follows it (a rotation, or nothing new).
                if case .nameRemoved = event { return }
                if !quiet || isLoss(event) { Console.message(event.description) }
            }
        } catch {
            resumed.stateFile?.removeIfNeverStored()
            Console.message(error.description)
            return ExitStatus.failure
        }
        // Read, and write, on the follower's thread: a chunk is written where it was read.
        let executor = followed.preferredExecutor
        let stateFile = resumed.stateFile
        return await withTaskExecutorPreference(executor) {
            let opened: (sink: any ChunkSink, file: AppendingFileSink?, state: FollowState?)
            do throws(FileError) {
                opened = try await resumed.openDestination(request, followed: followed, executor: executor)
            } catch {
                stateFile?.removeIfNeverStored()
                Console.message(error.code == .alreadyExists ? error.description + " (use --append to append to it)" : error.description)
                return ExitStatus.failure
            }
            return await ship(followed, to: opened, stateFile: stateFile, request: request)
        }
    }

    /// Writes every chunk of `followed` until the end (idle), a signal or a failure.
    private static func ship(
        _ followed: FollowedFile, to opened: (sink: any ChunkSink, file: AppendingFileSink?, state: FollowState?),
        stateFile: FollowStateFile?, request: Request
    ) async -> Int32 {
        let progress = FollowProgress(followed, file: request.file, mode: request.mode)
        var failure: String?
        do {
            try await FollowShipment.ship(
                followed, to: opened.sink, file: opened.file, options: request.shipment, stateFile: stateFile, state: opened.state)
        } catch let error as FileError where error.code == .closed && request.output == nil {
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
