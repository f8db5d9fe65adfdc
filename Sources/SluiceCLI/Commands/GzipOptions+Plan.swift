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
    func step(for source: FilePath, created: CreatedFiles) -> OperandStep {
        let destination: Transfer.Destination
        do throws(Skipped) {
            destination = try self.destination(for: source)
        } catch {
            return .skip(message: error.message, isFailure: error.isFailure)
        }
        if mode == .compress, destination == .standardOutput, !common.force, Console.isTerminal(1) {
            return .skip(message: "refusing to write compressed data to a terminal (use -f to force, or redirect)", isFailure: true)
        }
        return .transfer(Transfer(
            source: Transfer.Source(operand: source), destination: destination, verb: verb, transform: transform,
            removesSource: removesSources, created: created, compressionThreads: mode == .compress ? threads : nil))
    }

    /// A source passed over: the message to print, if any, and whether it is a failure or a warning.
    private struct Skipped: Error {
        var message: String?
        var isFailure: Bool
    }

    private func destination(for source: FilePath) throws(Skipped) -> Transfer.Destination {
        if test { return .discard }
        if toStandardOutput || output == "-" || (output == nil && source == "-") { return .standardOutput }
        if let output { return .file(output) }
        return .file(mode == .compress ? try compressedName(of: source) : try decompressedName(of: source))
    }

    /// `X.gz` for `X`; a name that already ends in `.gz` is left alone, with a warning.
    private func compressedName(of source: FilePath) throws(Skipped) -> FilePath {
        guard !source.hasSuffix(".gz") else {
            throw Skipped(message: common.quiet ? nil : "'\(source)' already has the .gz suffix -- unchanged", isFailure: false)
        }
        return FilePath(bytes: source.bytes + Array(".gz".utf8))
    }

    /// `X` for `X.gz`; anything else fails (`-o` names the output).
    private func decompressedName(of source: FilePath) throws(Skipped) -> FilePath {
        if (try? FileStatus.of(source))?.kind == .directory {
            throw Skipped(message: FileError.isDirectory(.read, path: source).description, isFailure: true)
        }
        guard source.hasSuffix(".gz"), source.lastComponent.bytes.count > 3 else {
            let reason = source.hasSuffix(".gz") ? "the name is only the .gz suffix" : "the name does not end in .gz"
            throw Skipped(message: "cannot decompress '\(source)': \(reason) (use -o to name the output)", isFailure: true)
        }
        return source.droppingLast(3)
    }
}
