#if canImport(Glibc)
import Glibc
#endif
import Sluice

/// `sluice compress` and `sluice decompress`: gzip (RFC 1952) through the pipeline, with the
/// conventions of `gzip`: each `X` to `X.gz` (or back), sources kept unless `--rm`.
enum GzipCommand {
    enum Mode {
        case compress, decompress

        var name: String { self == .compress ? "compress" : "decompress" }
    }

    static func help(_ mode: Mode) -> HelpText {
        var options: [(String, String)] = [
            ("-o, --output <dst>", "write the single source to DST ('-' is standard output)"),
            ("-c, --stdout", "write to standard output, keep sources"),
        ]
        switch mode {
        case .compress:
            options += [
                ("-1 ... -9", "compression level: -1 fastest, -9 best (default -6)"),
                ("--level <n>", "compression level 1...9"),
            ]
        case .decompress:
            options += [
                ("-t, --test", "decode and verify, write nothing"),
                ("--max-output <size>", "fail once the output would exceed SIZE bytes (binary\nunits: 512M, 2G)"),
            ]
        }
        options.append(("--rm", "remove each source once its output is complete and durable (one with\nother hard links or a set-ID or sticky bit is kept unless -f)"))
        options += HelpText.commonOptions
        switch mode {
        case .compress:
            return HelpText(
                overview: "Compress files to gzip (RFC 1952) through the system zlib.",
                usage: ["sluice compress [options] SRC...", "sluice compress [options] -o DST SRC", "sluice compress [options] -c SRC..."],
                arguments: [("SRC", "a file to compress to SRC.gz; '-' is standard input (to standard output\nunless -o)")],
                options: options,
                discussion: "Output has no file name and MTIME 0, so it is reproducible (as gzip -n).\nCompressed data is not written to a terminal without -f.")
        case .decompress:
            return HelpText(
                overview: "Decompress gzip files (RFC 1952), concatenated members included.",
                usage: ["sluice decompress [options] SRC...", "sluice decompress [options] -o DST SRC", "sluice decompress [options] -c SRC..."],
                arguments: [("SRC", "a .gz file to decompress to SRC without .gz; '-' is standard input (to\nstandard output unless -o)")],
                options: options,
                discussion: """
                    CRC-32 and ISIZE are verified; a bad or truncated member is an error and commits nothing.
                    Bytes after the last member: NUL padding is ignored; anything else keeps the output
                    and gives a warning (exit 2). Only gzip is accepted (not zlib or raw deflate streams).
                    Compressed data is not read from a terminal without -f.
                    """)
        }
    }

    static func run(_ mode: Mode, _ arguments: [[UInt8]]) async throws(UsageError) -> Int32 {
        var options = CommonOptions()
        var operands: [FilePath] = []
        var output: FilePath?
        var toStandardOutput = false
        var level = CompressionLevel.default
        var test = false
        var maxOutput: Int64?
        var removesSources = false
        var scanner = ArgumentScanner(arguments)
        while let item = scanner.next() {
            switch item {
            case .operand(let path): operands.append(path)
            case .short("o"), .long("output", _):
                let attached: String? = if case .long(_, let value) = item { value } else { nil }
                output = FilePath(try scanner.value(for: "-o", attached: attached))
            case .short("c"), .long("stdout", nil): toStandardOutput = true
            case .number(let digits) where mode == .compress:
                guard let value = Int(digits), let parsed = CompressionLevel(exactly: value) else {
                    throw UsageError("invalid compression level -\(digits) (expected -1 ... -9)")
                }
                level = parsed
            case .long("level", let attached) where mode == .compress:
                let text = try scanner.value(for: "--level", attached: attached)
                guard let value = Int(text), let parsed = CompressionLevel(exactly: value) else {
                    throw UsageError("invalid compression level '\(text)' (expected 1...9)")
                }
                level = parsed
            case .short("t") where mode == .decompress, .long("test", nil) where mode == .decompress: test = true
            case .long("max-output", let attached) where mode == .decompress:
                maxOutput = try parseSize(try scanner.value(for: "--max-output", attached: attached), option: "--max-output")
            case .long("rm", nil): removesSources = true
            default:
                if try !options.apply(item, &scanner) {
                    throw UsageError("unknown option \(item.spelling) for '\(mode.name)'")
                }
            }
        }
        if options.help {
            Console.writeOutput(help(mode).render())
            return ExitStatus.success
        }
        if options.version { return printVersion() }
        if operands.isEmpty {
            // As gzip: no operand means standard input; compress refuses to wait on a terminal
            // for data (decompress refuses to read one at all, below).
            guard mode == .decompress || !Console.isTerminal(0) else {
                throw UsageError("missing source (use '-' for standard input)")
            }
            operands = ["-"]
        }
        if output?.isStandardOutput == true { output = "-" }
        if output != nil && operands.count > 1 { throw UsageError("-o takes a single source") }
        if output != nil && toStandardOutput { throw UsageError("-o and -c cannot be used together") }
        if test && (output != nil || toStandardOutput) { throw UsageError("--test writes nothing: it cannot be used with -o or -c") }
        if removesSources {
            if !options.synchronize { throw UsageError("--rm needs a durable output: it cannot be used with --no-fsync") }
            if toStandardOutput || output == "-" { throw UsageError("--rm cannot be used with standard output") }
            if test { throw UsageError("--rm cannot be used with --test") }
            if operands.contains("-") { throw UsageError("--rm cannot remove standard input") }
        }

        let chunkSize = options.chunkSize
        let (chosenLevel, outputLimit) = (level, maxOutput)
        let transform: FileCopy<FileChunks, AnySink>.TransformFactory = switch mode {
        case .compress: { try GzipEncoder(level: chosenLevel, outputChunkSize: chunkSize) }
        case .decompress: { GzipDecoder(outputChunkSize: chunkSize, outputLimit: outputLimit) }
        }

        if mode == .decompress, !options.force, operands.contains("-"), Console.isTerminal(0) {
            // The mirror of the refusal to write compressed data to a terminal, as gzip: nobody
            // types gzip, and a read would only wait.
            Console.message("refusing to read compressed data from a terminal (use -f to force, or redirect)")
            return ExitStatus.failure
        }

        var status = ExitStatus.success
        func fail() { status = ExitStatus.failure }
        func warn() { if status == ExitStatus.success { status = ExitStatus.warning } }
        let created = CreatedFiles()
        for operand in operands {
            let source: Transfer.Source = operand == "-" ? .standardInput : .file(operand)
            let destination: Transfer.Destination
            if test {
                destination = .discard
            } else if toStandardOutput || output == "-" || (output == nil && operand == "-") {
                destination = .standardOutput
            } else if let output {
                destination = .file(output)
            } else if mode == .compress {
                if operand.hasSuffix(".gz") {
                    if !options.quiet { Console.message("'\(operand)' already has the .gz suffix -- unchanged") }
                    warn()
                    continue
                }
                destination = .file(FilePath(bytes: operand.bytes + Array(".gz".utf8)))
            } else {
                if (try? FileStatus.of(operand))?.kind == .directory {
                    Console.message(FileError.isDirectory("read", path: operand).description)
                    fail()
                    continue
                }
                guard operand.hasSuffix(".gz"), operand.lastComponent.bytes.count > 3 else {
                    let reason = operand.hasSuffix(".gz") ? "the name is only the .gz suffix" : "the name does not end in .gz"
                    Console.message("cannot decompress '\(operand)': \(reason) (use -o to name the output)")
                    fail()
                    continue
                }
                destination = .file(operand.droppingLast(3))
            }
            if mode == .compress, destination == .standardOutput, !options.force, Console.isTerminal(1) {
                Console.message("refusing to write compressed data to a terminal (use -f to force, or redirect)")
                fail()
                continue
            }
            let transfer = Transfer(
                source: source, destination: destination, verb: test ? "test" : mode.name, transform: transform,
                removesSource: removesSources, created: created)
            switch await transfer.run(options: options) {
            case .success(let warnings): if !warnings.isEmpty { warn() }
            case .failure: fail()
            case .brokenPipe: return ExitStatus.brokenPipe
            case .cancelled: return ExitStatus.interrupted
            }
        }
        return status
    }
}
