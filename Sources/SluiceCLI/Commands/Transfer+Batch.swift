import Sluice

/// A transfer run as one file of several at once (``OperandBatch``): a regular file to a file.
extension Transfer {
    /// The source and destination paths when the transfer is a file to a file (what the engine
    /// runs); `nil` for standard input or output and `--test`, which run alone.
    var filePaths: (source: Pathname, destination: Pathname)? {
        guard case .file(let source) = source, case .file(let destination) = destination else { return nil }
        return (source, destination)
    }

    /// The engine's job for this transfer; how it is written and checked is the engine's
    /// options (``OperandBatch``'s, from this transfer's `keepsModificationTime`, which every
    /// transfer of a command shares).
    func job(options: CommonOptions, completion: @escaping @Sendable (Copier.Outcome) -> Void) -> Copier.Job? {
        guard let (source, destination) = filePaths else { return nil }
        return Copier.Job(
            source: source, destination: destination, sourceStatus: try? FileStatus.of(source), transform: transform,
            completion: completion)
    }

    /// Reports a file the engine finished, as ``run(options:)`` reports one it ran: remembers
    /// the file created, prints the warnings, the failure or the `--verbose` report. `--rm` is
    /// left for ``removeSource(isDurable:hasWarnings:options:removals:)``, once the directories are synced.
    func report(_ result: Result<Copier.Committed, any Error>, options: CommonOptions) -> Outcome {
        let committed: Copier.Committed
        switch result {
        case .failure(let error):
            let (result, message) = classify(error)
            if !options.quiet, message != nil {
                for warning in transformWarnings?.withLock({ $0 }) ?? [] { Console.message("\(verb) '\(source.name)': \(warning)") }
            }
            if let message { Console.message(message) }
            return result
        case .success(let value): committed = value
        }
        if case .file(let path) = destination, let status = try? FileStatus.of(path), status.kind == .regular {
            created.insert(status)
        }
        if CommitGate.shared.interruption != nil {
            if case .file(let path) = destination { SignalWatcher.reportWritten(path) }
            return .cancelled
        }
        var warnings = committed.report.warnings + committed.warnings
        if case .notVerified(let reason) = committed.report.verification {
            warnings.append(StageWarning("not verified: \(reason)"))
        }
        if !options.quiet {
            for warning in warnings { Console.message("\(verb) '\(source.name)': \(warning)") }
        }
        if options.verbose { reportVerbosely(committed.report, options: options) }
        return .success(warnings: warnings)
    }

    /// `--rm` after the batch: removes the source, or says why it is kept.
    ///
    /// - Returns: `true` if it was kept (a warning, exit 2).
    func removeSource(
        isDurable: Bool, hasWarnings: Bool, opened: FileStatus?, options: CommonOptions, removals: DirectorySyncBatch
    ) -> Bool {
        guard removesSource, case .file(let path) = source,
            let kept = keepReason(
                path, hasWarnings: hasWarnings, isDurable: isDurable, opened: opened, options: options, removals: removals)
        else { return false }
        if !options.quiet { Console.message("kept '\(path)': \(kept)") }
        return true
    }
}
