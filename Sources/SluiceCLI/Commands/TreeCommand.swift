import Sluice

/// `sluice copy -r` / `-a`: each source copied as a tree (``TreeCopy``), its regular files many
/// at once through one ``Copier`` per source, its failures named
/// one by one and the rest copied. One progress (one bar, one last JSON line) covers every
/// source.
enum TreeCommand {
    /// Copies each source in turn.
    ///
    /// - Returns: 0, 1 if any entry failed, 2 if only warnings, 130 when interrupted (files
    ///   committed stay; those in flight leave nothing).
    static func run(_ options: CopyOptions) async -> Int32 {
        guard descriptorsAllowTreeCopy() else { return ExitStatus.failure }
        var status = ExitStatus.success
        let common = options.common
        let json = common.progress == .json
        // One progress for the whole command, whatever the number of trees: its totals grow as
        // each walk finds files, and it ends once, after the last tree.
        let progress = ManyFilesProgress(isTotalGrowing: true)
        let operation = CommandProgress(
            progress, mode: common.progress,
            label: options.sources.count == 1 ? "copy '\(options.sources[0])'" : "copy \(options.sources.count) sources")
        // What the last line's "error" says: the sources that failed whole, the entries that failed.
        var sourceFailures: [String] = []
        var failedEntries = 0
        var cancelled = false
        for (position, source) in options.sources.enumerated() {
            let verbose = common.verbose
            // The last tree's walk completes the totals.
            let copy = TreeCopy(
                from: source, to: options.destination, options: options.treeOptions, progress: progress,
                completesTotal: position == options.sources.count - 1,
                onOutcome: { outcome in
                    // One line per file as it finishes; its snapshot names the file and its index.
                    if json { Console.writeError(outcome.progress.jsonLine() + "\n") }
                    // `-v`: each file copied, as `cp -v` prints it, as it is committed.
                    if verbose, case .success = outcome.result {
                        Console.writeError(Transfer.arrowLine(from: outcome.source.description, to: outcome.destination.description))
                    }
                })
            do {
                let report = try await copy.run { error in Console.message(describe(error, source: source)) }
                if CommitGate.shared.interruption != nil { break }
                if report.failures > 0 {
                    status = ExitStatus.failure
                    failedEntries += report.failures
                } else if (!report.warnings.isEmpty || !report.unsyncedDirectories.isEmpty) && status == ExitStatus.success {
                    status = ExitStatus.warning
                }
                printReport(report, of: copy, common: common)
            } catch is CancellationError {
                cancelled = true
                break
            } catch {
                if CommitGate.shared.interruption != nil { break }
                Console.message(describe(error, source: source))
                sourceFailures.append(describe(error, source: source))
                status = ExitStatus.failure
            }
        }
        let interrupted = cancelled || CommitGate.shared.interruption != nil
        let failures = sourceFailures + (failedEntries > 0 ? ["\(failedEntries) entries failed"] : [])
        await operation.end(interrupted ? .interrupted : failures.isEmpty ? .completed : .failed(failures.joined(separator: "; ")))
        return interrupted ? ExitStatus.interrupted : status
    }

    /// Whether the limit on open files leaves a tree copy what it needs; says why not.
    private static func descriptorsAllowTreeCopy() -> Bool {
        let descriptors = DescriptorBudget.current
        guard !descriptors.allowsTreeCopy else { return true }
        Console.message(
            "the limit on open files (ulimit -n) is \(descriptors.limit), of which \(descriptors.reserved) are open or kept for the runtime: "
                + "a tree copy needs at least \(descriptors.reserved + DescriptorBudget.minimumForTree)")
        return false
    }

    /// The warnings of one tree, the directories whose sync failed, and with `-v` its counts.
    private static func printReport(
        _ report: Copier.TreeReport, of copy: TreeCopy, common: CommonOptions
    ) {
        if !common.quiet {
            for warning in report.warnings { Console.message("copy '\(copy.source)': \(warning)") }
            for (directory, error) in report.unsyncedDirectories.sorted(by: { $0.key.description < $1.key.description }) {
                Console.message("files in '\(directory)' are in place, but \(error)")
            }
        }
        if common.verbose {
            Console.message(
                "copy '\(copy.source)' to '\(copy.target)': \(report.files) files (\(report.bytes) bytes), "
                    + "\(report.directories) directories, \(report.symbolicLinks) symbolic links, "
                    + "\(report.hardLinks) hard links, \(report.specialFiles) special files, "
                    + "\(report.failures) failed")
        }
    }

    private static func describe(_ error: any Error, source: Pathname) -> String {
        if let error = error as? FileError { return error.messageNamingForce }
        return "cannot copy '\(source)': \(error)"
    }
}
