import Sluice

/// What `sluice copy` was asked, read from its command line and checked: the sources, and the
/// destination each goes to.
struct CopyOptions {
    var common: CommonOptions
    var sources: [Pathname]
    /// The last operand; `-` is standard output (and so is `/dev/stdout`).
    var destination: Pathname
    /// The descriptor the destination names, if it is `-` or one the process inherited
    /// (`/dev/stderr`, `/dev/fd/3`, a link to one): written in place.
    private var destinationDescriptor: Transfer.Destination?
    /// Whether ``destination`` is an existing directory, each source going into it under its
    /// own name (as `cp`).
    var intoDirectory: Bool
    /// `-r`, `-R`, `--recursive` or `-a`: sources may be directories (``Copier/copyTree(from:to:options:onOutcome:onFailure:)``).
    var recursive: Bool
    /// `-a`: hard links within a tree are kept.
    var archive: Bool
    /// `-H`, `-L` or `-P` (the default): which symbolic links a tree copy follows.
    var links: Copier.SymbolicLinkPolicy
    /// Whether `-H`, `-L` or `-P` was given.
    private var linkOptionGiven: Bool
    /// `--rm`: each source is moved, as `mv` (a rename within one file system, else a copy then
    /// `SourceRemoval`'s rule).
    var moves: Bool

    /// - Throws: ``UsageError`` for a missing operand, several sources without a directory
    ///   destination, or standard input into a directory.
    init(_ arguments: ParsedArguments) throws(UsageError) {
        common = CommonOptions(arguments)
        archive = arguments.has(.archive)
        recursive = archive || arguments.has(.recursive)
        if archive { common.preserve = true }
        links = arguments.has(.followAll) ? .all : arguments.has(.followOperands) ? .root : .never
        linkOptionGiven = arguments.has(.followAll) || arguments.has(.followOperands) || arguments.has(.followNone)
        moves = arguments.has(.moveSource)
        var operands = arguments.operands
        guard operands.count >= 2 else {
            throw UsageError(operands.isEmpty ? "missing source and destination" : "missing destination after '\(operands[0])'")
        }
        destination = operands.removeLast()
        let named = Transfer.Destination(path: destination)
        if named == .standardOutput { destination = "-" }
        if case .descriptor = named { destinationDescriptor = named }
        sources = operands
        intoDirectory = destinationDescriptor == nil && (try? FileStatus.of(destination))?.kind == .directory
        try validate()
    }

    private func validate() throws(UsageError) {
        try common.validate()
        if linkOptionGiven && !recursive {
            throw UsageError("-H, -L and -P choose which symbolic links a tree copy follows: they need -r or -a")
        }
        if recursive {
            if destinationDescriptor != nil || sources.contains("-") {
                throw UsageError("-r copies files and directories by name: not standard input or standard output ('-')")
            }
        }
        if moves {
            if destinationDescriptor != nil || sources.contains("-") {
                throw UsageError("--rm moves files by name: not standard input or standard output ('-')")
            }
            if !common.synchronizes { throw UsageError("--rm needs a durable copy: it cannot be used with --no-fsync") }
        }
        if common.verify && destinationDescriptor != nil {
            throw UsageError("--verify reads the output back: it cannot be used with standard output")
        }
        if sources.count > 1 && !intoDirectory {
            throw UsageError("copying several sources needs a directory destination; '\(destination)' is not one")
        }
        if intoDirectory && sources.contains("-") {
            throw UsageError("standard input has no name to copy into directory '\(destination)': name the destination file")
        }
        if common.reflink == .always {
            // As cp: a clone keeps the source's blocks as they are, holes and zeros alike.
            if common.sparse != .auto { throw UsageError("--reflink=always can be used only with --sparse=auto") }
            if common.forcesPipeline || common.rateLimit != nil {
                throw UsageError(
                    "--reflink=always clones: it cannot go through the pipeline (--pipeline, --chunk-size, --capacity, --limit-rate)")
            }
            if destinationDescriptor != nil || sources.contains("-") {
                throw UsageError("--reflink=always clones a file into a file: not standard input or standard output")
            }
        }
    }

    /// What a tree copy follows and whether it keeps hard links, from the command line.
    var treeOptions: Copier.TreeOptions { Copier.TreeOptions(keepsHardLinks: archive, links: links) }

    /// Where `source` is copied to.
    func destination(for source: Pathname) -> Transfer.Destination {
        if let destinationDescriptor { return destinationDescriptor }
        return .file(intoDirectory ? destination.appending(source.lastComponent) : destination)
    }
}
