import Sluice

extension GzipOptions {
    /// Why decompression refuses to start (exit 1): standard input is a source and a terminal,
    /// without `-f`. The mirror of the refusal to write compressed data to a terminal, as gzip:
    /// nobody types gzip, and a read would only wait.
    var terminalInputRefusal: String? {
        guard mode == .decompress, !common.force, sources.contains("-"), Console.isTerminal(0) else { return nil }
        return "refusing to read compressed data from a terminal (use -f to force, or redirect)"
    }

    /// What to do with `source`, decided when its turn comes: the transfer to its destination,
    /// or why it is passed over (a name that already ends in `.gz` to compress, one that does
    /// not to decompress, a directory, compressed data to a terminal).
    ///
    /// - Parameter created: the files this run has created, which a later source never overwrites.
    func step(for source: Pathname, created: CreatedFiles) -> OperandStep {
        let destination: Transfer.Destination
        do throws(Skipped) {
            destination = try self.destination(for: source)
        } catch {
            return .skip(message: error.message, isFailure: error.isFailure)
        }
        if mode == .compress, destination == .standardOutput, !common.force, Console.isTerminal(1) {
            return .skip(message: "refusing to write compressed data to a terminal (use -f to force, or redirect)", isFailure: true)
        }
        // Once each: a verification decodes the source again.
        let warnings = LockedValue<[StageWarning]>([])
        let record: @Sendable (StageWarning) -> Void = { warning in
            warnings.withLock { if !$0.contains(warning) { $0.append(warning) } }
        }
        return .transfer(Transfer(
            source: Transfer.Source(operand: source), destination: destination, verb: verb,
            transform: transform(for: source, to: destination, onWarning: record),
            transformWarnings: warnings,
            removesSource: removesSources, keepsModificationTime: range == nil, created: created,
            compressionThreads: mode == .compress ? threads : nil,
            range: range.map { Transfer.RangeRead(bytes: $0, threadCount: threads) }))
    }

    /// A source passed over: the message to print, if any, and whether it is a failure or a warning.
    private struct Skipped: Error {
        var message: String?
        var isFailure: Bool
    }

    private func destination(for source: Pathname) throws(Skipped) -> Transfer.Destination {
        if test { return .discard }
        if toStandardOutput || output == "-" || (output == nil && (source == "-" || range != nil)) { return .standardOutput }
        if let output { return Transfer.Destination(path: output) }
        return .file(mode == .compress ? try compressedName(of: source) : try decompressedName(of: source))
    }

    /// The suffixes a compressed name ends in, and what replaces each in the decompressed
    /// name, as `gzip` has them: `x.gz` to `x`, `x.tgz` and `x.taz` to `x.tar`.
    static let suffixes: [(compressed: String, decompressed: String)] = [(".gz", ""), (".tgz", ".tar"), (".taz", ".tar")]

    /// The suffix of ``suffixes`` that `name` ends in, if any.
    static func suffix(of name: Pathname) -> (compressed: String, decompressed: String)? {
        suffixes.first { name.hasSuffix($0.compressed) }
    }

    /// `X` for `X.gz`, `X.tar` for `X.tgz` or `X.taz`; `nil` for a name without one of the
    /// ``suffixes``, or whose last component is only the suffix.
    static func nameWithoutSuffix(_ name: Pathname) -> Pathname? {
        guard let suffix = suffix(of: name), name.lastComponent.bytes.count > suffix.compressed.utf8.count else {
            return nil
        }
        return Pathname(bytes: name.droppingLast(suffix.compressed.utf8.count).bytes + Array(suffix.decompressed.utf8))
    }

    /// `X.gz` for `X`; a name that already ends in a compressed suffix (`.gz`, `.tgz`, `.taz`)
    /// is left alone, with a warning.
    private func compressedName(of source: Pathname) throws(Skipped) -> Pathname {
        if let suffix = Self.suffix(of: source) {
            let message = "'\(source)' already has the \(suffix.compressed) suffix -- unchanged"
            throw Skipped(message: common.quiet ? nil : message, isFailure: false)
        }
        return Pathname(bytes: source.bytes + Array(".gz".utf8))
    }

    /// `X` for `X.gz`, `X.tar` for `X.tgz` or `X.taz`; anything else fails (`-o` names the output).
    private func decompressedName(of source: Pathname) throws(Skipped) -> Pathname {
        if (try? FileStatus.of(source))?.kind == .directory {
            throw Skipped(message: FileError.isDirectory(.read, path: source).description, isFailure: true)
        }
        guard let name = Self.nameWithoutSuffix(source) else {
            let reason = Self.suffix(of: source).map { "the name is only the \($0.compressed) suffix" }
                ?? "the name does not end in .gz, .tgz or .taz"
            throw Skipped(message: "cannot decompress '\(source)': \(reason) (use -o to name the output)", isFailure: true)
        }
        return name
    }
}
