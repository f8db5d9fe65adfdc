import Sluice

extension GzipOptions {
    /// The operands of `-r`, as `gzip -r` takes them: each directory replaced by the regular
    /// files in it and below, in the order the walk finds them (`TreeWalker`, symbolic links
    /// not followed, names as bytes), other operands as they are.
    ///
    /// Passed over, silently unless `-v`: for compress, names already ending in `.gz` or `.tgz`
    /// (compressing them again gains nothing); for decompress, names without a known suffix;
    /// symbolic links, FIFOs, devices and sockets. An entry that cannot be read is named on
    /// standard error and the walk goes on.
    ///
    /// The walk's system calls run on a thread of their own, never on the cooperative pool.
    /// Memory: one path per file found (the list the transfers then take, in turn).
    ///
    /// - Returns: the sources, and whether any entry failed.
    func expandingDirectories() async -> (sources: [Pathname], failed: Bool) {
        let (mode, verbose, operands) = (mode, common.verbose, sources)
        return await Task(executorPreference: BlockingIOExecutor(label: "sluice.walk")) {
            var sources: [Pathname] = []
            var failed = false
            for operand in operands {
                guard operand != "-", (try? FileStatus.of(operand))?.kind == .directory else {
                    sources.append(operand)
                    continue
                }
                var walker = TreeWalker(root: operand, followsRootLink: true)
                while let event = walker.next() {
                    if CommitGate.shared.interruption != nil { return (sources, failed) }
                    switch event {
                    case .file(let entry):
                        if let reason = Self.passOver(entry, mode: mode) {
                            if verbose { Console.message("\(mode.name) '\(entry.path)': \(reason) -- passed over") }
                        } else {
                            sources.append(entry.path)
                        }
                    case .failure(let error), .unreadableDirectory(_, let error):
                        Console.message(error.description)
                        failed = true
                    case .enterDirectory, .leaveDirectory:
                        break
                    }
                }
            }
            return (sources, failed)
        }.value
    }

    /// Why `-r` passes over `entry`, or `nil` to take it.
    private static func passOver(_ entry: TreeWalker.Entry, mode: GzipCommand.Mode) -> String? {
        guard entry.status.kind == .regular else { return "not a regular file" }
        if entry.isSluiceTemporaryFile { return "a temporary file an interrupted sluice left" }
        let suffix = suffix(of: entry.name)
        switch mode {
        case .compress:
            if let suffix, suffix.compressed != ".taz" { return "already has the \(suffix.compressed) suffix" }
        case .decompress:
            if suffix == nil || nameWithoutSuffix(entry.name) == nil { return "the name has no .gz, .tgz or .taz suffix" }
        }
        return nil
    }
}
