import Sluice

/// `sluice copy -r` / `-a`: each source copied as a tree by one ``Copier``
/// (``Copier/copyTree(from:to:options:onOutcome:onFailure:)``), the regular files of every tree
/// many at once through its one engine, failures named one by one and the rest copied. One
/// progress (one bar, one last JSON line) covers every source; the directories are synced once
/// each, when the copier finishes after the last tree.
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
        let copier = Copier(options: options.copierOptions, progress: progress)
        for (position, source) in options.sources.enumerated() {
            let verbose = common.verbose
            let target = TreeCopy.target(source: source, destination: options.destination)
            do {
                // The last tree's walk completes the totals (its last files then have a fraction).
                let report = try await copier.copyTree(
                    from: source, to: options.destination, options: options.treeOptions, completesTotal: position == options.sources.count - 1,
                    onOutcome: fileLine(json: json, verbose: verbose), onFailure: { error in Console.message(describe(error, source: source)) })
                if CommitGate.shared.interruption != nil { break }
                if report.failures > 0 {
                    status = ExitStatus.failure
                    failedEntries += report.failures
                } else if !report.warnings.isEmpty && status == ExitStatus.success {
                    status = ExitStatus.warning
                }
                printReport(report, source: source, target: target, common: common)
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
        // Every walk is over (the totals are complete, also when the last tree failed before
        // its walk ended); then every directory renamed into is synced once (a cancelled
        // copier ends its files in flight first).
        copier.totalIsComplete()
        let totals = await copier.finish()
        if !totals.unsyncedDirectories.isEmpty && status == ExitStatus.success { status = ExitStatus.warning }
        if !common.quiet { printUnsynced(totals.unsyncedDirectories) }
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

    /// What is printed as each regular file ends: its JSON line (`--progress=json`: its snapshot
    /// names the file and its index), and with `-v` its `'SRC' -> 'DST'` line, as `cp -v`
    /// prints it, once it is committed.
    private static func fileLine(json: Bool, verbose: Bool) -> @Sendable (Copier.Outcome) -> Void {
        { outcome in
            if json { Console.writeError(outcome.progress.jsonLine() + "\n") }
            if verbose, case .success = outcome.result {
                Console.writeError(Transfer.arrowLine(from: outcome.source.description, to: outcome.destination.description))
            }
        }
    }

    /// The warnings of one tree and with `-v` its counts.
    private static func printReport(_ report: Copier.TreeReport, source: Pathname, target: Pathname, common: CommonOptions) {
        if !common.quiet {
            for warning in report.warnings { Console.message("copy '\(source)': \(warning)") }
        }
        if common.verbose {
            Console.message(
                "copy '\(source)' to '\(target)': \(report.files) files (\(report.bytes) bytes), "
                    + "\(report.directories) directories, \(report.symbolicLinks) symbolic links, "
                    + "\(report.hardLinks) hard links, \(report.specialFiles) special files, "
                    + "\(report.failures) failed")
        }
    }

    /// The directories whose sync failed: their files are in place but may not survive a crash.
    private static func printUnsynced(_ directories: [Pathname: FileError]) {
        for (directory, error) in directories.sorted(by: { $0.key.description < $1.key.description }) {
            Console.message("files in '\(directory)' are in place, but \(error)")
        }
    }

    private static func describe(_ error: any Error, source: Pathname) -> String {
        if let error = error as? FileError { return error.messageNamingForce }
        return "cannot copy '\(source)': \(error)"
    }
}
