import Sluice

/// `sluice copy -r` / `-a`: each source copied as a tree (``TreeCopy``), its regular files many
/// at once through one ``ManyFileCopy`` per source (``ManyFileJobRunner``), its failures named
/// one by one and the rest copied.
enum TreeCommand {
    /// Copies each source in turn.
    ///
    /// - Returns: 0, 1 if any entry failed, 2 if only warnings, 130 when interrupted (files
    ///   committed stay; those in flight leave nothing).
    static func run(_ options: CopyOptions) async -> Int32 {
        let descriptors = DescriptorBudget.current
        guard descriptors.allowsTreeCopy else {
            Console.message(
                "the limit on open files (ulimit -n) is \(descriptors.limit), of which \(descriptors.reserved) are open or kept for the runtime: "
                    + "a tree copy needs at least \(descriptors.reserved + DescriptorBudget.minimumForTree)")
            return ExitStatus.failure
        }
        var status = ExitStatus.success
        for source in options.sources {
            let common = options.common
            let json = common.progress == .json
            let verbose = common.verbose
            // How each file is copied is the tree's options' (treeOptions.file, chunkSize).
            let runner = ManyFileJobRunner(
                width: common.jobs,
                onOutcome: { outcome in
                    // One line per file as it finishes; its snapshot names the file and its index.
                    if json { Console.writeError(outcome.progress.jsonLine() + "\n") }
                    // `-v`: each file copied, as `cp -v` prints it, as it is committed.
                    if verbose, case .success = outcome.result {
                        Console.writeError(Transfer.arrowLine(from: outcome.source.description, to: outcome.destination.description))
                    }
                })
            let copy = TreeCopy(from: source, to: options.destination, options: options.treeOptions, runner: runner)
            let display = common.progress == .human
                ? ProgressDisplay(hub: runner.engine.progress, mode: .human, label: "copy '\(source)'") : nil
            let quiet = common.quiet
            var failure: String?
            do {
                let report = try await copy.run { error in Console.message(describe(error, source: source)) }
                if CommitGate.shared.interruption != nil { return await interrupted(display, runner, json: json) }
                let totals = runner.totals
                let unsynced = totals?.unsyncedDirectories ?? [:]
                if report.failures > 0 {
                    status = ExitStatus.failure
                    failure = "\(report.failures) entries failed"
                } else if (!report.warnings.isEmpty || !unsynced.isEmpty) && status == ExitStatus.success {
                    status = ExitStatus.warning
                }
                await display?.finish(failure.map { .failed($0) } ?? .completed)
                if json, let last = totals?.progress { Console.writeError(last.jsonLine(done: true, error: failure) + "\n") }
                if !quiet {
                    for warning in report.warnings { Console.message("copy '\(source)': \(warning)") }
                    for (directory, error) in unsynced.sorted(by: { $0.key.description < $1.key.description }) {
                        Console.message("files in '\(directory)' are in place, but \(error)")
                    }
                }
                if common.verbose {
                    Console.message(
                        "copy '\(source)' to '\(copy.target)': \(report.files) files (\(report.bytes) bytes), "
                            + "\(report.directories) directories, \(report.symbolicLinks) symbolic links, "
                            + "\(report.hardLinks) hard links, \(report.specialFiles) special files, "
                            + "\(report.failures) failed")
                }
            } catch is CancellationError {
                return await interrupted(display, runner, json: json)
            } catch {
                if CommitGate.shared.interruption != nil { return await interrupted(display, runner, json: json) }
                await display?.finish(.failed(describe(error, source: source)))
                Console.message(describe(error, source: source))
                status = ExitStatus.failure
            }
        }
        return status
    }

    /// Ends the progress of an interrupted copy and gives its status.
    private static func interrupted(_ display: ProgressDisplay?, _ runner: ManyFileJobRunner, json: Bool) async -> Int32 {
        await display?.finish(.interrupted)
        if json, let last = runner.totals?.progress { Console.writeError(last.jsonLine(done: true, error: "interrupted") + "\n") }
        return ExitStatus.interrupted
    }

    private static func describe(_ error: any Error, source: FilePath) -> String {
        if let error = error as? FileError { return error.messageNamingForce }
        return "cannot copy '\(source)': \(error)"
    }
}
