import Sluice

/// `sluice copy -r` / `-a`: each source copied as a tree (``TreeCopy``), its failures named one
/// by one and the rest copied.
enum TreeCommand {
    /// Copies each source in turn.
    ///
    /// - Returns: 0, 1 if any entry failed, 2 if only warnings, 130 when interrupted (files
    ///   committed stay; the one in flight leaves nothing).
    static func run(_ options: CopyOptions) async -> Int32 {
        var status = ExitStatus.success
        for source in options.sources {
            let copy = TreeCopy(from: source, to: options.destination, options: options.treeOptions)
            let quiet = options.common.quiet
            do {
                let report = try await copy.run { error in Console.message(describe(error, source: source)) }
                if CommitGate.shared.interruption != nil { return ExitStatus.interrupted }
                if report.failures > 0 {
                    status = ExitStatus.failure
                } else if !report.warnings.isEmpty && status == ExitStatus.success {
                    status = ExitStatus.warning
                }
                if !quiet { for warning in report.warnings { Console.message("copy '\(source)': \(warning)") } }
                if options.common.verbose {
                    Console.message(
                        "copy '\(source)' to '\(copy.target)': \(report.files) files (\(report.bytes) bytes), "
                            + "\(report.directories) directories, \(report.symbolicLinks) symbolic links, "
                            + "\(report.hardLinks) hard links, \(report.specialFiles) special files, "
                            + "\(report.failures) failed")
                }
            } catch is CancellationError {
                return ExitStatus.interrupted
            } catch {
                if CommitGate.shared.interruption != nil { return ExitStatus.interrupted }
                Console.message(describe(error, source: source))
                status = ExitStatus.failure
            }
        }
        return status
    }

    private static func describe(_ error: any Error, source: FilePath) -> String {
        if let error = error as? FileError { return error.description }
        return "cannot copy '\(source)': \(error)"
    }
}
