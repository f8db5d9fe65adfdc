import Sluice
import SluiceBenchmarks

/// The option table: every option of every command, declared once. The order is the order of
/// the help: a command's own options first, then those it shares, `--help` and `--version` last.
extension CommandOption {
    static let all: [CommandOption] = [
        output, standardOutput, level, threads, threadsDecompress, blockSize, noIndex, test, maxOutput, range, removeSource,
        size, runs, out, design, consumer, sinkRate, chunkSizes, input, spillDirectory,
        decompress, decompressAgain, list, keep, noName, noNameDecompress, name, fast, best, generateCompletionScript, generateManual,
        append, fromEnd, untilIdle, state, syncInterval, gzipOutput,
        recursive, recursiveGzip, archive, followOperands, followAll, followNone, moveSource,
        force, noFsync, verify, verifyGzip, limitRate, reflink, sparse, pipeline, preserve, preserveGzip, chunkSize, capacity, jobs, progress, quiet, verbose, help, version,
    ]

    private static let transfers: Set<CommandName> = [.copy, .compress, .decompress]
    private static let gzip: Set<CommandName> = [.compress, .decompress]

    // MARK: compress and decompress

    static let output = CommandOption(
        long: "output", short: "o", value: .required(name: "dst", kind: .path),
        abstract: "write the single source to <dst> ('-' is standard output)",
        commands: gzip.union([.benchRun, .follow]))
    static let standardOutput = CommandOption(
        long: "stdout", short: "c", abstract: "write to standard output, keep sources", commands: gzip.union([.follow]))
    static let level = CommandOption(
        long: "level", takesDigits: true, value: .required(name: "n", kind: .integer(1...9, noun: "compression level")),
        abstract: "compression level: 1 fastest, 9 best", defaultValue: "\(CompressionLevel.default)", commands: [.compress, .follow])
    static let threads = CommandOption(
        long: "threads", short: "p", value: .required(name: "n", kind: .integer(1...1024, noun: "count of threads")),
        abstract: "compress on <n> threads (the output is the same for every <n>)",
        defaultValue: "the processors sluice may run on, as nproc",
        commands: [.compress, .follow])
    static let threadsDecompress = CommandOption(
        long: "threads", short: "p", value: .required(name: "n", kind: .integer(1...1024, noun: "count of threads")),
        abstract: "decompress on <n> threads the files sluice indexed (their segments, each checked against the "
            + "index) and BGZF files (their members); any other member on one",
        defaultValue: "the processors sluice may run on, as nproc",
        commands: [.decompress])
    static let blockSize = CommandOption(
        long: "block-size", short: "b", value: .required(name: "size", kind: .kibibytes(32...(512 << 10))),
        abstract: "compress in blocks of <size>: KiB when bare, as pigz -b, or with a binary unit (256K, 1M); "
            + "at least 32K",
        defaultValue: ValueKind.describe(Int64(ParallelGzipEncoder.defaultBlockSize)),
        commands: [.compress])
    static let noIndex = CommandOption(
        long: "no-index",
        abstract: "write no index, as before 0.2: the output is then decoded on one core (an index of where each "
            + "segment starts, in the header, lets a decoder split the file; gzip and other readers ignore it)",
        commands: [.compress])
    static let test = CommandOption(
        long: "test", short: "t", abstract: "decode and verify, write nothing", commands: [.decompress])
    static let maxOutput = CommandOption(
        long: "max-output", value: .required(name: "size", kind: .size(0...Int64.max)),
        abstract: "fail once the output would exceed <size> bytes (binary units: 512M, 2G)",
        commands: [.decompress])
    static let range = CommandOption(
        long: "range", value: .required(name: "start:end", kind: .byteRange),
        abstract: "write only the uncompressed bytes from <start> up to <end> (exclusive; sizes as 512M; either may be "
            + "left out), to standard output unless -o names a file: in a file sluice indexed only the segments the range "
            + "overlaps are read and decoded; any other file is decoded from its start (-v says so)",
        commands: [.decompress])
    static let removeSource = CommandOption(
        long: "rm",
        abstract: "remove each source once its output is complete and durable, and sync its directory so the "
            + "removal is durable too; a source that changed since it was read, or that another process has open "
            + "for writing, is kept with a warning (one with other hard links or a set-ID or sticky bit is kept "
            + "unless -f)",
        commands: gzip)

    // MARK: follow

    static let append = CommandOption(
        long: "append", abstract: "append to an existing <dst> (without it, an existing <dst> is refused)",
        commands: [.follow])
    static let fromEnd = CommandOption(
        long: "from-end", abstract: "start at the end the file has when it is first opened, as tail -F, not at its first byte",
        commands: [.follow])
    static let untilIdle = CommandOption(
        long: "until-idle", value: .required(name: "duration", kind: .duration),
        abstract: "stop once nothing has been appended for <duration> (2s, 500ms, 1m; a bare number is seconds); "
            + "exit 0, or 2 if a loss was reported",
        commands: [.follow])
    static let state = CommandOption(
        long: "state", value: .required(name: "path", kind: .path),
        abstract: "record at each durable point where reading stands and how long <dst> is, and resume from there: "
            + "nothing lost or repeated after a crash (without it, a follower that stops starts again)",
        commands: [.follow])
    static let syncInterval = CommandOption(
        long: "sync-interval", value: .required(name: "duration", kind: .duration),
        abstract: "make what was written durable, and record it with --state, at most <duration> after it was written",
        defaultValue: "1s", commands: [.follow])
    static let gzipOutput = CommandOption(
        long: "gzip", short: "z",
        abstract: "write <dst> gzip-compressed, a member ending at each durable point, so it is a valid gzip file at each",
        commands: [.follow])

    // MARK: bench, and its hidden child bench-run

    static let size = CommandOption(
        long: "size", value: .required(name: "size", kind: .size((1 << 20)...Int64.max)),
        abstract: "input size, binary units", defaultValue: ValueKind.describe(BenchCommand.Plan().size),
        commands: [.bench])
    static let runs = CommandOption(
        long: "runs", value: .required(name: "n", kind: .integer(1...Int.max, noun: "count of runs")),
        abstract: "counted runs per design and consumer, after one warm-up run that is discarded; the median "
            + "is reported",
        defaultValue: "\(BenchCommand.Plan().runs)",
        commands: [.bench])
    static let out = CommandOption(
        long: "out", value: .required(name: "dir", kind: .path),
        abstract: "where to write bench.csv, memory.svg and, with --chunk-sizes, chunk-sizes.svg",
        defaultValue: "\(BenchCommand.Plan().out)",
        commands: [.bench])
    static let design = CommandOption(
        long: "design", value: .required(name: "list", kind: .list(choices: BenchmarkDesign.allCases.map(\.rawValue))),
        abstract: "comma-separated: \(BenchmarkDesign.allCases.map(\.rawValue).joined(separator: ", "))",
        defaultValue: BenchCommand.Plan().designs == BenchmarkDesign.allCases ? "all" : nil,
        commands: [.bench, .benchRun])
    static let consumer = CommandOption(
        long: "consumer",
        value: .required(name: "list", kind: .list(choices: BenchmarkConsumer.allCases.map(\.rawValue))),
        abstract: "comma-separated: \(BenchmarkConsumer.allCases.map(\.rawValue).joined(separator: ", "))",
        defaultValue: BenchCommand.Plan().consumers == BenchmarkConsumer.allCases ? "both" : nil,
        commands: [.bench, .benchRun])
    static let sinkRate = CommandOption(
        long: "sink-rate", value: .required(name: "rate", kind: .rate((1 << 10)...Int64.max)),
        abstract: "the slow consumer's bytes per second, binary units",
        defaultValue: ValueKind.describe(BenchCommand.Plan().sinkRate), commands: [.bench, .benchRun])
    static let chunkSizes = CommandOption(
        long: "chunk-sizes", value: .required(name: "list", kind: .sizes(1...(1 << 30))),
        abstract: "comma-separated chunk sizes, binary units (4K,64K,1M): adds a sweep of bounded-pull, "
            + "unbounded-stream (fast consumer) and dd bs=SIZE at each size",
        commands: [.bench])
    static let input = CommandOption(
        long: "input", value: .required(name: "path", kind: .path), abstract: "the file to read",
        commands: [.benchRun])
    static let spillDirectory = CommandOption(
        long: "spill-dir", value: .required(name: "dir", kind: .path),
        abstract: "where the push buffer's spill policy writes its files", commands: [.benchRun])

    // MARK: gzip's habits, and what the installation generates

    static let decompress = CommandOption(
        long: "decompress", short: "d", abstract: "decompress: sluice compress -d is sluice decompress (as gzip -d)",
        commands: [.compress], switchesTo: .decompress)
    static let decompressAgain = CommandOption(
        long: "decompress", short: "d", abstract: "decompress, as without it (accepted as gzip -d is)",
        commands: [.decompress])
    static let list = CommandOption(
        long: "list", short: "l",
        abstract: "list each gzip file, as gzip 1.12's -l: it is decoded to its end (as -t reads it) for its "
            + "compressed size (the whole file's), the uncompressed size and CRC-32 of its last member (exact past "
            + "4 GiB), ratio and output name; with -v also method, CRC-32, date and time (the file's own)",
        commands: gzip, switchesTo: .decompress)
    static let keep = CommandOption(
        long: "keep", short: "k", abstract: "keep the sources: the default (as gzip -k); --rm removes them",
        commands: gzip)
    static let noName = CommandOption(
        long: "no-name", short: "n",
        abstract: "store no file name or time in the header: the default, always (as gzip -n)", commands: [.compress])
    static let noNameDecompress = CommandOption(
        long: "no-name", short: "n",
        abstract: "restore no file name or time from the header: the default, always (as gzip -dn); the output "
            + "takes its name from the source's and its source's modification time",
        commands: [.decompress])
    static let name = CommandOption(
        long: "name", short: "N", abstract: "not supported: no file name or time is ever stored", commands: gzip,
        refusal: "-N (--name) is not supported: sluice stores no file name or time in the gzip header and restores "
            + "none (as gzip -n); an output file takes its source's modification time")
    static let fast = CommandOption(
        long: "fast", abstract: "compression level 1, as -1", commands: [.compress], setting: ("level", .integer(1)))
    static let best = CommandOption(
        long: "best", abstract: "compression level 9, as -9", commands: [.compress], setting: ("level", .integer(9)))
    static let generateCompletionScript = CommandOption(
        long: "generate-completion-script", value: .required(name: "shell", kind: .choice(["bash", "zsh"])),
        abstract: "print the completion script for bash or zsh", commands: [.sluice])
    static let generateManual = CommandOption(
        long: "generate-manual", abstract: "print the manual page, for man(1)", commands: [.sluice])

    // MARK: copy paths and holes

    static let reflink = CommandOption(
        long: "reflink", value: .attached(choices: Copier.ReflinkMode.allCases.map(\.rawValue)),
        abstract: "whether the copy may share the source's blocks (a clone, where the file system can: XFS, "
            + "Btrfs), as cp: auto clones where it can, always (or --reflink alone) clones or fails, never "
            + "does not",
        defaultValue: CommonOptions().reflink.rawValue, commands: [.copy])
    static let sparse = CommandOption(
        long: "sparse", value: .required(name: "when", kind: .choice(FileChunks.HoleMode.allCases.map(\.rawValue))),
        abstract: "holes in the output, as cp: auto keeps the source's holes, always also turns runs of zeros "
            + "of a file-system block or more into holes, never writes every block",
        defaultValue: CommonOptions().sparse.rawValue, commands: [.copy, .decompress])
    static let pipeline = CommandOption(
        long: "pipeline",
        abstract: "copy through sluice's own pipeline (reads and writes in user space), never a clone or "
            + "copy_file_range; an explicit --chunk-size or --capacity implies it, and so does --limit-rate (a "
            + "kernel copy cannot be paced)",
        commands: [.copy])

    // MARK: copy: trees

    static let recursive = CommandOption(
        long: "recursive", short: "r", alternateShort: "R",
        abstract: "copy directories and everything in them, as cp -R: into <dst> if it is a directory, else as "
            + "<dst>; symbolic links copied as links, FIFOs and devices recreated; entries that fail are named "
            + "and the rest copied (exit 1)",
        commands: [.copy])
    static let moveSource = CommandOption(
        long: "rm",
        abstract: "move, as mv: within one file system rename each source (and sync both directories); across "
            + "file systems copy it durably, then remove it if it did not change since it was read and no other "
            + "process has it open for writing (kept with a warning otherwise, and, unless -f, with other hard "
            + "links or a set-ID or sticky bit); with -r or -a a source directory goes once empty",
        commands: [.copy])
    static let recursiveGzip = CommandOption(
        long: "recursive", short: "r",
        abstract: "as gzip -r: every regular file in each directory operand and below, each by the single-file "
            + "rules beside its source (kept unless --rm); compress passes over names already ending in .gz or "
            + ".tgz, decompress over names without a known suffix, silently unless -v; symbolic links are not "
            + "followed",
        commands: gzip)
    static let archive = CommandOption(
        long: "archive", short: "a",
        abstract: "-r with --preserve, symbolic links as links and hard links within the tree kept, as cp -a",
        commands: [.copy])
    static let followOperands = CommandOption(
        long: "dereference-command-line", short: "H",
        abstract: "with -r, follow a symbolic link given as a source (links inside the tree stay links)",
        commands: [.copy])
    static let followAll = CommandOption(
        long: "dereference", short: "L",
        abstract: "with -r, follow every symbolic link: copy what it leads to", commands: [.copy])
    static let followNone = CommandOption(
        long: "no-dereference", short: "P",
        abstract: "with -r, follow no symbolic link (the default)", commands: [.copy])

    // MARK: shared

    static let force = CommandOption(
        long: "force", short: "f", abstract: "overwrite an existing regular file (replaced atomically)",
        commands: transfers)
    static let noFsync = CommandOption(
        long: "no-fsync", abstract: "skip fsync of the file and its directory (faster, not durable: nothing is promised after a crash)",
        commands: transfers.union([.follow]))
    static let verify = CommandOption(
        long: "verify",
        abstract: "before committing, read the output back from the disk (after fsync, its cached pages dropped) "
            + "and check its CRC-32 and size against the source's: on a difference, commit nothing, name the first "
            + "differing offset and exit 1; a copy by copy_file_range reads the source a second time for its "
            + "CRC-32, a clone (shared extents) is not read back; not with --no-fsync or standard output",
        commands: [.copy])
    /// `--verify` as compress and decompress do it: the same option (one value), said of
    /// compressed data.
    static let verifyGzip = CommandOption(
        long: "verify",
        abstract: "before committing, read the output back from the disk (after fsync, its cached pages dropped): "
            + "compress decodes it and checks the data and its size against the source's, decompress checks its "
            + "CRC-32 and size against what was decoded; on a difference, commit nothing, name the first differing "
            + "offset in the uncompressed data and exit 1; not with --no-fsync or standard output",
        commands: gzip)
    static let limitRate = CommandOption(
        long: "limit-rate", value: .required(name: "rate", kind: .rate(1...Int64.max)),
        abstract: "read at most <rate> bytes per second for the whole command (every operand, a whole tree, "
            + "small files included; for decompress, the compressed bytes), units as --chunk-size: 50M is 50 MiB/s "
            + "(as pv -L, rsync --bwlimit); without --chunk-size, chunks are at most 0.1 s of the rate, so the "
            + "bytes flow evenly; copy then goes through the pipeline; the reader waits on backpressure, so memory "
            + "stays as without it",
        commands: transfers)
    static let preserve = CommandOption(
        long: "preserve", short: "p",
        abstract: "keep the source's mode, access and modification times (nanoseconds), and owner where "
            + "permitted; in a tree (-r), also extended attributes and ACLs, one warning per kind the destination "
            + "refuses",
        commands: [.copy])
    static let preserveGzip = CommandOption(
        long: "preserve",
        abstract: "keep the source's mode, access and modification times, and owner where permitted (the "
            + "modification time is kept without it)",
        commands: gzip)
    static let chunkSize = CommandOption(
        long: "chunk-size", value: .required(name: "size", kind: .size(1...(1 << 30))),
        abstract: "bytes per chunk, binary units: 4096, 256K, 1M",
        defaultValue: ValueKind.describe(Int64(FileChunks.defaultChunkSize)),
        commands: transfers.union([.bench, .benchRun]))
    static let capacity = CommandOption(
        long: "capacity", value: .required(name: "n", kind: .integer(1...(1 << 20), noun: "count of chunks")),
        abstract: "chunks buffered between stages, at least 1",
        defaultValue: "\(ValueKind.describe(Int64(PipelineOptions.defaultCapacityBytes))) of chunks, "
            + "\(PipelineOptions.defaultCapacityRange.lowerBound) to \(PipelineOptions.defaultCapacityRange.upperBound): "
            + "\(PipelineOptions.defaultCapacity(chunkSize: 1 << 20)) at 1M, "
            + "\(PipelineOptions.defaultCapacity(chunkSize: 4 << 10)) at 4K",
        commands: transfers.union([.bench, .benchRun]))
    static let jobs = CommandOption(
        long: "jobs", short: "j", value: .required(name: "n", kind: .integer(1...1024, noun: "count of files")),
        abstract: "with several files, how many move at once, within one "
            + "\(ValueKind.describe(Int64(Copier.Options.defaultByteBudget))) buffer budget",
        defaultValue: "\(Copier.Options.widthPerProcessor) per processor, "
            + "\(Copier.Options.widthRange.lowerBound) to \(Copier.Options.widthRange.upperBound)",
        commands: transfers)
    static let progress = CommandOption(
        long: "progress", value: .attached(choices: ["json"]),
        abstract: "show progress on standard error: a bar on a terminal, else a plain line; with =json, one "
            + "JSON object per line",
        commands: transfers.union([.follow]))
    static let quiet = CommandOption(
        long: "quiet", short: "q", abstract: "do not print warnings", commands: transfers.union([.follow]))
    static let verbose = CommandOption(
        long: "verbose", short: "v",
        abstract: "print 'SRC' -> 'DST' for each file (as cp -v) and a report: bytes, CRC-32 (or why there is "
            + "none), time; for copy, the path taken (clone, copy_file_range or pipeline); on standard error",
        commands: transfers)
    static let help = CommandOption(
        long: "help", short: "h", abstract: "show this help", commands: transfers.union([.sluice, .bench, .follow]))
    static let version = CommandOption(
        long: "version", abstract: "show the version, and the version of zlib in use", commands: transfers.union([.sluice, .follow]))
}
