import Sluice

extension GzipOptions {
    /// What `-r` says of an entry it passes over (with `-v`), or `nil` to take it, as `gzip -r`:
    /// for compress, names already ending in `.gz` or `.tgz` (compressing them again gains
    /// nothing); for decompress, names without a known suffix; symbolic links, FIFOs, devices
    /// and sockets; temporary files an interrupted Sluice left.
    var passOver: @Sendable (TreeWalker.Entry) -> String? {
        let mode = mode
        return { entry in Self.passOver(entry, mode: mode).map { "\(mode.name) '\(entry.path)': \($0) -- passed over" } }
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
