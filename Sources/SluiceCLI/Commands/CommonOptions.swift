import Sluice

/// The options `copy`, `compress` and `decompress` share (`cp`, `gzip`, `zstd` and `pv`
/// conventions), read from a parsed command line with their defaults.
struct CommonOptions {
    var force = false
    var synchronizes = true
    var preserve = false
    var chunkSize = FileChunks.defaultChunkSize
    /// `--capacity`, or the pipeline's default for the chunk size (4 MiB of chunks, 4...1024).
    var capacity = PipelineOptions.defaultCapacity(chunkSize: FileChunks.defaultChunkSize)
    /// `--jobs`: files in flight at once with several operands.
    var jobs = Copier.Options.defaultWidth
    var progress = ProgressMode.none
    var quiet = false
    var verbose = false
    /// `--limit-rate`: the most bytes per second read from the sources, all of them together;
    /// every copy of the command is handed this one limiter.
    var rateLimit: RateLimiter?
    /// `--verify`: read each output back before committing it.
    var verify = false
    /// `--reflink` (`copy`); `--reflink` alone is `always`, as cp.
    var reflink = Copier.ReflinkMode.auto
    /// `--sparse` (`copy`, `decompress`).
    var sparse = FileChunks.HoleMode.auto
    /// `--pipeline`, or an explicit `--chunk-size` or `--capacity`: the copy goes through the
    /// pipeline, whatever the path table says.
    var forcesPipeline = false

    /// The options given in `arguments`, the defaults for the others.
    /// The defaults, which the option table's help gives.
    init() {}

    init(_ arguments: ParsedArguments) {
        force = arguments.has(.force)
        synchronizes = !arguments.has(.noFsync)
        preserve = arguments.has(.preserve)
        rateLimit = arguments.size(.limitRate).map { RateLimiter(bytesPerSecond: $0) }
        chunkSize = arguments.size(.chunkSize).map { Int($0) }
            ?? rateLimit.map { Self.pacedChunkSize(bytesPerSecond: $0.bytesPerSecond) } ?? chunkSize
        capacity = arguments.integer(.capacity)
            ?? PipelineOptions.defaultCapacity(chunkSize: chunkSize)
        jobs = arguments.integer(.jobs) ?? jobs
        if arguments.has(.progress) {
            progress = arguments.choice(.progress) == "json" ? .json : .human
        }
        quiet = arguments.has(.quiet)
        verbose = arguments.has(.verbose)
        verify = arguments.has(.verify)
        if arguments.has(.reflink) {
            reflink = arguments.choice(.reflink).flatMap(Copier.ReflinkMode.init(rawValue:)) ?? .always
        }
        sparse = arguments.choice(.sparse).flatMap(FileChunks.HoleMode.init(rawValue:)) ?? .auto
        // A rate limit takes the pipeline by itself (RegularFileCopy: a kernel copy cannot be
        // paced); a verification takes the table's verified row (CopyMethod.chain).
        forcesPipeline = arguments.has(.pipeline) || arguments.has(.chunkSize) || arguments.has(.capacity)
    }

    /// The chunk size under a rate limit with no `--chunk-size`: at most 0.1 s of the rate (and
    /// at most the default), so that the bytes flow evenly, a chunk each tenth of a second,
    /// rather than a whole chunk at once after a long wait.
    static func pacedChunkSize(bytesPerSecond: Int64) -> Int {
        Int(min(Int64(FileChunks.defaultChunkSize), max(1, bytesPerSecond / 10)))
    }

    /// The usage errors of the options alone: `--verify` reads back a durable file, so it cannot
    /// go with `--no-fsync` (the pages read back would be the ones the writes left in memory).
    ///
    /// - Throws: ``UsageError``.
    func validate() throws(UsageError) {
        if verify && !synchronizes {
            throw UsageError("--verify reads the output back from the disk: it cannot be used with --no-fsync")
        }
    }

    var sinkOptions: FileSink.Options {
        FileSink.Options(replacesExisting: force, synchronizes: synchronizes, preservesAttributes: preserve, holes: sparse)
    }

    /// The copier's options for a command: each file's paths and holes, the pipeline's capacity,
    /// its CRC-32 for `--verbose` and `--verify`, the rate, and with `--verify` the check of its
    /// output (as its transform says: ``VerifiableTransform``); its outputs take their source's
    /// modification time when `keepsModificationTime` (as `gzip`'s do).
    func copierOptions(keepsModificationTime: Bool = false) -> Copier.Options {
        var sink = sinkOptions
        sink.preservesModificationTime = keepsModificationTime
        let pipeline = PipelineOptions(
            capacity: capacity, computesCRC32: verbose || verify, rateLimit: rateLimit, verifiesOutput: verify)
        let file = Copier.FileOptions(
            reflink: reflink, holes: sparse, forcesPipeline: forcesPipeline, pipeline: pipeline,
            sliceSize: Copier.FileOptions.defaultSliceSize)
        return Copier.Options(width: jobs, chunkSize: chunkSize, copy: file, sink: sink)
    }
}
