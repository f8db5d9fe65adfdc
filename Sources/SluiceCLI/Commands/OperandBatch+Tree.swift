import Sluice

/// `copy -r` / `-a`: each source copied as a tree by the batch's ``Copier``
/// (``Copier/copyTree(from:to:options:onOutcome:onFailure:)``), the regular files of every tree
/// many at once through its one engine, failures named one by one and the rest copied. The
/// directories are synced once each, when the engine finishes after the last tree.
extension OperandBatch {
    /// Whether the limit on open files leaves a tree copy what it needs; says why not.
    static func descriptorsAllowTreeCopy() -> Bool {
        let descriptors = DescriptorBudget.current
        guard !descriptors.allowsTreeCopy else { return true }
        Console.message(
            "the limit on open files (ulimit -n) is \(descriptors.limit), of which \(descriptors.reserved) are open or kept for the runtime: "
                + "a tree copy needs at least \(descriptors.reserved + DescriptorBudget.minimumForTree)")
        return false
    }

    /// Copies `source` as a tree on the batch's engine and counts it: 1 if any entry failed,
    /// else 2 if it warned; a signal stops the command (130: files committed stay, those in
    /// flight leave nothing).
    ///
    /// - Parameter completesTotal: whether this is the last tree, whose walk completes the
    ///   totals (its last files then have a fraction).
    ///   - move: with `copy -r --rm`, where the tree's copied files are recorded, to be removed
    ///     once durable (only if every entry was copied).
    func copyTree(
        _ source: Pathname, to destination: Pathname, options treeOptions: Copier.TreeOptions, move: TreeMove?, at position: Int,
        completesTotal: Bool
    ) async {
        let engine = startSegment(for: nil)
        let (json, verbose) = (options.progress == .json, options.verbose)
        // Named before the copy, which may create the destination directory.
        let target = Copier.treeTarget(source: source, destination: destination)
        do {
            let report = try await engine.copyTree(
                from: source, to: destination, options: treeOptions, completesTotal: completesTotal,
                onOutcome: { [line = Self.fileLine(json: json, verbose: verbose)] outcome in
                    move?.record(outcome)
                    line(outcome)
                },
                onFailure: { error in Console.message(Self.describe(error, source: source)) })
            if CommitGate.shared.interruption != nil {
                stopStatus = ExitStatus.interrupted
                return
            }
            if report.failures > 0 {
                tally.fail()
                failedEntries += report.failures
                if move != nil, !options.quiet { Console.message("kept '\(source)': not every entry of it was copied") }
            } else if !report.warnings.isEmpty {
                tally.warn()
            }
            if let move, report.failures == 0 { treeMoves.append(move) }
            printReport(report, source: source, target: target)
        } catch is CancellationError {
            stopStatus = ExitStatus.interrupted
        } catch {
            if CommitGate.shared.interruption != nil {
                stopStatus = ExitStatus.interrupted
                return
            }
            Console.message(Self.describe(error, source: source))
            treeFailures.append(Self.describe(error, source: source))
            tally.fail()
        }
    }

    /// What is printed as each regular file of a tree ends: its JSON line (`--progress=json`:
    /// its snapshot names the file and its index), and with `-v` its `'SRC' -> 'DST'` line, as
    /// `cp -v` prints it, once it is committed.
    private static func fileLine(json: Bool, verbose: Bool) -> @Sendable (Copier.Outcome) -> Void {
        { outcome in
            if json { Console.writeError(outcome.progress.jsonLine() + "\n") }
            if verbose, case .success = outcome.result {
                Console.writeError(Transfer.arrowLine(from: outcome.source.description, to: outcome.destination.description))
            }
        }
    }

    /// The warnings of one tree and with `-v` its counts.
    private func printReport(_ report: Copier.TreeReport, source: Pathname, target: Pathname) {
        if !options.quiet {
            for warning in report.warnings { Console.message("\(verb) '\(source)': \(warning)") }
        }
        if options.verbose {
            Console.message(
                "\(verb) '\(source)' to '\(target)': \(report.files.counted("file")) (\(report.bytes.counted("byte"))), "
                    + "\(report.directories.counted("directory", plural: "directories")), "
                    + "\(report.symbolicLinks.counted("symbolic link")), \(report.hardLinks.counted("hard link")), "
                    + "\(report.specialFiles.counted("special file")), \(report.failures) failed")
        }
    }

    private static func describe(_ error: any Error, source: Pathname) -> String {
        if let error = error as? FileError { return error.messageNamingForce }
        return "cannot copy '\(source)': \(error)"
    }
}
