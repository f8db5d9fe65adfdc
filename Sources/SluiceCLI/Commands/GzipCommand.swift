import Sluice

/// `sluice compress` and `sluice decompress`: gzip (RFC 1952) through the pipeline, with the
/// conventions of `gzip`: each `X` to `X.gz` (or back), sources kept unless `--rm`.
///
/// The command line is read and checked by ``GzipOptions``, each source's destination planned
/// by ``GzipOptions/step(for:created:)``, and the transfers run here.
enum GzipCommand {
    /// Which way the data goes.
    enum Mode {
        case compress, decompress

        /// The command the mode is run by.
        var command: CommandName { self == .compress ? .compress : .decompress }
        /// The command's name, and the verb of its messages.
        var name: String { command.rawValue }
    }

    /// `sluice compress --help` or `sluice decompress --help`; the options come from the option
    /// table.
    static func help(_ mode: Mode) -> HelpText {
        switch mode {
        case .compress:
            HelpText(
                command: mode.command,
                overview: "Compress files to gzip (RFC 1952) through the system zlib.",
                discussion: [
                    "The gzip header has no file name and MTIME 0, so the output is reproducible (as gzip -n); the "
                        + "output file itself gets the source's modification time (as gzip gives it) and its "
                        + "permission bits as the kernel applies them at creation (the directory's default ACL, else "
                        + "the umask, as cp); --preserve adds the access time and owner. Compressed data is not "
                        + "written to a terminal without -f. -d decompresses, as sluice decompress.",
                    "The input is cut into blocks of -b bytes, compressed on -p threads at once, each with the 32 KiB "
                        + "before it as its history, into one gzip member (as pigz): the output is the same for every "
                        + "thread count and chunk size.",
                ],
                usage: usage,
                arguments: [
                    .init(
                        label: "<source>",
                        abstract: "a file to compress to <source>.gz; '-' is standard input (to standard output unless -o)"),
                ])
        case .decompress:
            HelpText(
                command: mode.command,
                overview: "Decompress gzip files (RFC 1952), concatenated members included.",
                discussion: [
                    "CRC-32 and ISIZE are verified; a bad or truncated member is an error and commits nothing. Bytes "
                        + "after the last member: NUL padding is ignored; anything else keeps the output and gives a "
                        + "warning (exit 2). Only gzip is accepted (not zlib or raw deflate streams). Compressed data "
                        + "is not read from a terminal without -f.",
                    "X.gz is written to X, X.tgz and X.taz to X.tar. The output file gets the source's modification "
                        + "time (not the MTIME of the header, which sluice never restores: as gzip -d without -N) and "
                        + "its permission bits as the kernel applies them at creation (default ACL, else umask); "
                        + "--preserve adds the access time and owner.",
                    "-l lists in gzip 1.12's -l columns and, as gzip 1.12 does, decodes each file to its end (as -t "
                        + "reads it): the sizes are exact, past 4 GiB too; a file of several members shows the whole "
                        + "file's compressed size and its last member's size and CRC-32. A truncated or inconsistent "
                        + "file is reported (exit 1) and the others are still listed.",
                ],
                usage: usage,
                arguments: [
                    .init(
                        label: "<source>",
                        abstract: "a .gz, .tgz or .taz file to decompress; '-' is standard input (to standard output "
                            + "unless -o)"),
                ])
        }
    }

    /// The usages both commands share.
    private static let usage = [
        "[<options>] <source> ...", "[<options>] -o <dst> <source>", "[<options>] -c <source> ...",
        "-l <source> ...",
    ]

    /// Checks the command line, then runs each source in turn.
    ///
    /// - Returns: the exit status (README, "Exit status").
    /// - Throws: ``UsageError`` before anything is read.
    static func run(_ mode: Mode, _ arguments: ParsedArguments) async throws(UsageError) -> Int32 {
        let options = try GzipOptions(mode, arguments)
        if let refusal = options.terminalInputRefusal {
            Console.message(refusal)
            return ExitStatus.failure
        }
        if options.list { return await GzipListing.run(options.sources, verbose: options.common.verbose) }
        let created = CreatedFiles()
        if options.recursive {
            return await OperandBatch.run(
                walking: options.sources, options: options.common, verb: options.verb, verbose: options.common.verbose,
                passOver: options.passOver
            ) { source in
                options.step(for: source, created: created)
            }
        }
        return await OperandBatch.run(options.sources, options: options.common, verb: options.verb) { source in
            options.step(for: source, created: created)
        }
    }
}
