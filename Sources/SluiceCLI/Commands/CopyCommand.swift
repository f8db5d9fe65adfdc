import Sluice

/// `sluice copy [<options>] <source>... <destination>`: copies files through the pull/bounded
/// pipeline, atomically and durably. Its command line is checked and planned by ``CopyOptions``.
enum CopyCommand {
    /// `sluice copy --help`; its options come from the option table.
    static let help = HelpText(
        command: .copy,
        overview: "Copy files as streams of chunks with backpressure, atomically and durably.",
        discussion: [
            "An existing regular destination is refused unless --force; then it is replaced atomically "
                + "(temporary file in its directory, fsync, rename, directory fsync). A destination that is not "
                + "a regular file (/dev/null, a FIFO) is written in place.",
            "With -r or -a a source may be a directory: it is copied into <destination> if that is a directory, "
                + "else as <destination>, relative to directory descriptors at any depth. Each regular file is "
                + "copied atomically as above; directories get their modes and times after their contents; a "
                + "directory copied into itself is refused.",
        ],
        usage: [
            "[<options>] <source> <destination>", "[<options>] <source> ... <directory>",
            "-r|-a [<options>] <source> ... <destination>",
        ],
        arguments: [
            .init(label: "<source>", abstract: "a file to copy; '-' is standard input"),
            .init(label: "<destination>", abstract: "the destination file; '-' is standard output"),
            .init(
                label: "<directory>", abstract: "an existing directory: each source is copied into it under its own name"),
        ])

    /// Checks the command line, then copies each source in turn.
    ///
    /// - Returns: the exit status (README, "Exit status").
    /// - Throws: ``UsageError`` before anything is copied.
    static func run(_ arguments: ParsedArguments) async throws(UsageError) -> Int32 {
        let options = try CopyOptions(arguments)
        if options.recursive {
            return await OperandBatch.run(options.sources, options: options.common, verb: "copy", copiesTrees: true) { source in
                if options.moves, let moved = move(source, to: Copier.treeTarget(source: source, destination: options.destination), options) {
                    return moved
                }
                return .tree(destination: options.destination, options: options.treeOptions, moves: options.moves)
            }
        }
        let created = CreatedFiles()
        return await OperandBatch.run(options.sources, options: options.common, verb: "copy") { source in
            if source != "-", (try? FileStatus.of(source))?.kind == .directory {
                // cp's words, exit 1; the other operands are still copied.
                return .skip(message: "-r not specified; omitting directory '\(source)'", isFailure: true)
            }
            let destination = options.destination(for: source)
            if options.moves, case .file(let path) = destination, let moved = move(source, to: path, options) { return moved }
            var transfer = Transfer(
                source: Transfer.Source(operand: source), destination: destination, verb: "copy", transform: nil, created: created)
            transfer.removesSource = options.moves
            return .transfer(transfer)
        }
    }

    /// `--rm` within one file system: `source` renamed to `destination` (``SourceRemoval/rename(_:to:force:system:)``),
    /// or why not; `nil` when the copy and the removal must make the move.
    private static func move(_ source: Pathname, to destination: Pathname, _ options: CopyOptions) -> OperandStep? {
        let size = (try? FileStatus.of(source, followsLinks: false)).flatMap { $0.kind == .regular ? $0.size : nil }
        do {
            guard try SourceRemoval.rename(source, to: destination, force: options.common.force) else { return nil }
        } catch {
            return .skip(message: error.messageNamingForce, isFailure: true)
        }
        let line = options.common.verbose && !options.common.quiet ? "renamed '\(source)' -> '\(destination)'" : nil
        return .moved(message: line, size: size)
    }
}
