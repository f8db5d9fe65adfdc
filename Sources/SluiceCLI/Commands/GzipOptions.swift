import Sluice

/// What `sluice compress` or `sluice decompress` was asked, read from its command line and
/// checked against the combinations that make no sense (`-o` with several sources, `--rm` to
/// standard output, ...).
struct GzipOptions {
    var mode: GzipCommand.Mode
    var common: CommonOptions
    /// The sources; standard input (`-`) when none is given.
    var sources: [Pathname]
    /// `-o`: the output of the single source; `-` is standard output (and so is `/dev/stdout`).
    var output: Pathname?
    /// `-c`: every output to standard output.
    var toStandardOutput: Bool
    var level: CompressionLevel
    /// `-p`: the threads that compress or decompress; by default the processors this process
    /// may run on.
    var threads: Int
    /// `-b`: the uncompressed bytes per compressed block.
    var blockSize: Int
    /// `--no-index`: the format before 0.2, every block primed with the one before.
    var writesIndex: Bool
    /// `-t`: decode and verify, write nothing.
    var test: Bool
    /// `--max-output`: the most bytes decompression may write, per source.
    var maxOutput: Int64?
    /// `--range`: only these uncompressed bytes of the single source.
    var range: Range<Int64>?
    /// `--rm`: remove each source once its output is durable.
    var removesSources: Bool
    /// `-l`: list each source's sizes and output name, decode nothing.
    var list: Bool
    /// `-r`: directory operands stand for the regular files in them, taken as the walk finds them
    /// (`OperandBatch.run(walking:options:verb:verbose:passOver:plan:)`).
    var recursive: Bool

    /// - Throws: ``UsageError`` for options that cannot go together.
    init(_ mode: GzipCommand.Mode, _ arguments: ParsedArguments) throws(UsageError) {
        self.mode = mode
        common = CommonOptions(arguments)
        sources = arguments.operands
        output = arguments.path(.output)
        if let named = output.map(Transfer.Destination.init(path:)), named == .standardOutput { output = "-" }
        toStandardOutput = arguments.has(.standardOutput)
        level = arguments.integer(.level).flatMap(CompressionLevel.init(exactly:)) ?? .default
        threads = arguments.integer(.threads) ?? ProcessorAffinity.availableProcessorCount()
        blockSize = arguments.size(.blockSize).map { Int($0) } ?? ParallelGzipEncoder.defaultBlockSize
        writesIndex = !arguments.has(.noIndex)
        test = arguments.has(.test)
        maxOutput = arguments.size(.maxOutput)
        range = arguments.byteRange(.range)
        removesSources = arguments.has(.removeSource)
        list = arguments.has(.list)
        recursive = arguments.has(.recursiveGzip)
        // As gzip: no operand means standard input, a terminal too for compress (what is typed,
        // to the end of input); decompress refuses to read compressed data from one
        // (terminalInputRefusal), and a terminal as the output of compressed data is refused.
        if sources.isEmpty { sources = ["-"] }
        try validate()
    }

    private func validate() throws(UsageError) {
        try common.validate()
        if common.verify && test { throw UsageError("--test writes nothing: it cannot be used with --verify") }
        if common.verify && (toStandardOutput || output == "-" || (output == nil && sources.contains("-"))) {
            throw UsageError("--verify reads the output back: it cannot be used with standard output")
        }
        if output != nil && sources.count > 1 { throw UsageError("-o takes a single source") }
        if recursive && output != nil { throw UsageError("-r writes each file beside its source: it cannot be used with -o") }
        if recursive && list { throw UsageError("--list lists files: it cannot be used with -r") }
        if output != nil && toStandardOutput { throw UsageError("-o and -c cannot be used together") }
        if test && (output != nil || toStandardOutput) {
            throw UsageError("--test writes nothing: it cannot be used with -o or -c")
        }
        if list && (output != nil || toStandardOutput || test || removesSources) {
            throw UsageError("--list only lists: it cannot be used with -o, -c, --test or --rm")
        }
        try validateRange()
        guard removesSources else { return }
        if !common.synchronizes { throw UsageError("--rm needs a durable output: it cannot be used with --no-fsync") }
        if toStandardOutput || output == "-" { throw UsageError("--rm cannot be used with standard output") }
        if test { throw UsageError("--rm cannot be used with --test") }
        if sources.contains("-") { throw UsageError("--rm cannot remove standard input") }
    }

    /// `--range` reads one file at random and writes part of its output: not with what needs the
    /// whole output, several sources, or standard input.
    private func validateRange() throws(UsageError) {
        guard range != nil else { return }
        let refusal = "--range writes part of one file's output: it cannot be used with"
        if sources.count > 1 || recursive { throw UsageError("\(refusal) several sources or -r") }
        if sources.contains("-") { throw UsageError("--range reads a file at random: it cannot read standard input") }
        // `--test` would check only the range's segments and trailer, not the file.
        if list || test || removesSources || common.verify || maxOutput != nil {
            throw UsageError("\(refusal) --list, --test, --rm, --verify or --max-output")
        }
    }

    /// The verb of messages: `compress`, `decompress`, or `test`.
    var verb: String { test ? "test" : mode.name }

    /// The stage the pipeline of `source` to `destination` runs: the encoder or the decoder,
    /// with its chunk size and its level, threads and block size, or its output limit.
    /// Compression always runs the block format, so that the output is the same for every
    /// thread count; its access points are laid out for the source's size, and its index is
    /// reserved where the output is a regular file the sink can write again before the commit
    /// (not standard output, not a device), unless `--no-index` (<doc:IndexedGzip>).
    /// `onWarning` is told of the parallel decoder's warnings as they are met.
    func transform(
        for source: Pathname, to destination: Transfer.Destination, onWarning: @escaping @Sendable (StageWarning) -> Void
    ) -> TransformFactory {
        let (chunkSize, level, outputLimit, threads, blockSize) = (common.chunkSize, level, maxOutput, threads, blockSize)
        var indexing = ParallelGzipEncoder.Indexing.none
        if mode == .compress && writesIndex {
            let size = source == "-" ? nil : (try? FileStatus.of(source)).flatMap { $0.kind == .regular ? $0.size : nil }
            var isFile = false
            if case .file(let path) = destination { isFile = (try? FileStatus.of(path)).map { $0.kind == .regular } ?? true }
            indexing = .accessPoints(inputSize: size, reservesIndex: isFile && size != nil)
        }
        return switch mode {
        case .compress: { [indexing] in
            ParallelGzipEncoder(
                level: level, threadCount: threads, blockSize: blockSize, outputChunkSize: chunkSize, maximumBlocksInFlight: nil,
                indexing: indexing)
        }
        // At -p 1 too: one thread inflates, and an index is checked as at any other count.
        case .decompress: {
            ParallelGzipDecoder(threadCount: threads, outputChunkSize: chunkSize, outputLimit: outputLimit, onWarning: onWarning)
        }
        }
    }
}
