import Sluice

/// `sluice copy [options] SRC... DST`: copies files through the pull/bounded pipeline.
enum CopyCommand {
    static let help = HelpText(
        overview: "Copy files as streams of chunks with backpressure, atomically and durably.",
        usage: ["sluice copy [options] SRC DST", "sluice copy [options] SRC... DIR"],
        arguments: [
            ("SRC", "a file to copy; '-' is standard input"),
            ("DST", "the destination file; '-' is standard output; an existing directory means\ninto it, under the source's name"),
        ],
        options: HelpText.commonOptions,
        discussion: """
            An existing regular destination is refused unless --force; then it is replaced
            atomically (temporary file in its directory, fsync, rename, directory fsync).
            A destination that is not a regular file (/dev/null, a FIFO) is written in place.
            """)

    static func run(_ arguments: [[UInt8]]) async throws(UsageError) -> Int32 {
        var options = CommonOptions()
        var operands: [FilePath] = []
        var scanner = ArgumentScanner(arguments)
        while let item = scanner.next() {
            if case .operand(let path) = item {
                operands.append(path)
            } else if try !options.apply(item, &scanner) {
                throw UsageError("unknown option \(item.spelling) for 'copy'")
            }
        }
        if options.help {
            Console.writeOutput(help.render())
            return ExitStatus.success
        }
        if options.version { return printVersion() }
        guard operands.count >= 2 else {
            throw UsageError(operands.isEmpty ? "missing source and destination" : "missing destination after '\(operands[0])'")
        }
        var destination = operands.removeLast()
        if destination.isStandardOutput { destination = "-" }
        let destinationIsDirectory = destination != "-" && (try? FileStatus.of(destination))?.kind == .directory
        if operands.count > 1 && !destinationIsDirectory {
            throw UsageError("copying several sources needs a directory destination; '\(destination)' is not one")
        }
        if destinationIsDirectory && operands.contains("-") {
            throw UsageError("standard input has no name to copy into directory '\(destination)': name the destination file")
        }

        var status = ExitStatus.success
        let created = CreatedFiles()
        for operand in operands {
            let source: Transfer.Source = operand == "-" ? .standardInput : .file(operand)
            let target: Transfer.Destination
            if destination == "-" {
                target = .standardOutput
            } else if destinationIsDirectory {
                target = .file(destination.appending(operand.lastComponent))
            } else {
                target = .file(destination)
            }
            let transfer = Transfer(source: source, destination: target, verb: "copy", transform: nil, created: created)
            switch await transfer.run(options: options) {
            case .success(let warnings): if !warnings.isEmpty && status == ExitStatus.success { status = ExitStatus.warning }
            case .failure: status = ExitStatus.failure
            case .brokenPipe: return ExitStatus.brokenPipe
            case .cancelled: return ExitStatus.interrupted
            }
        }
        return status
    }
}

extension ArgumentScanner.Item {
    /// How the user wrote the option, for messages.
    var spelling: String {
        switch self {
        case .long(let name, _): return "'--\(name)'"
        case .short(let letter): return "'-\(letter)'"
        case .number(let digits): return "'-\(digits)'"
        case .operand(let path): return "'\(path)'"
        }
    }
}

func printVersion() -> Int32 {
    Console.writeOutput("sluice \(sluiceVersion)\n")
    return ExitStatus.success
}

let sluiceVersion = "0.1.0"
