extension Copier {
    /// Everything a copier's files are copied by, each setting in one place: how many move at
    /// once, what they buffer, which paths they may take, how each is written and what it keeps.
    ///
    /// Grouped by concern:
    /// - concurrency: ``width``;
    /// - buffering: ``byteBudget`` (all files together), ``chunkSize``, and each file's channel
    ///   `capacity` in ``copy``'s ``FileOptions/pipeline``;
    /// - copy paths: ``copy`` (``FileOptions/reflink``, ``FileOptions/forcesPipeline``);
    /// - durability, replacing and holes: ``sink`` (``FileSink/Options/synchronizes``,
    ///   ``FileSink/Options/replacesExisting``, ``FileSink/Options/holes``);
    /// - preservation: ``sink`` (``FileSink/Options/preservesAttributes``,
    ///   ``FileSink/Options/preservesModificationTime``); a tree's links and hard links are
    ///   ``TreeOptions``, which only a tree has;
    /// - rate and verification: ``rateLimit`` and ``verifiesOutput``, at hand; with the CRC-32
    ///   and the channels' capacity, ``copy``'s ``FileOptions/pipeline``.
    public struct Options: Sendable, Hashable {
        /// The most files in flight (>= 1), within the process's share of open files (under a
        /// low `ulimit -n`, fewer). Default
        /// ``defaultWidth``.
        public var width: Int
        /// The bytes all files in flight may buffer together (>= 1). Default ``defaultByteBudget``.
        public var byteBudget: Int
        /// The largest chunk of a file's pipeline; a smaller file reads in chunks of its own
        /// size (rounded up to 4 KiB). Default ``FileChunks/defaultChunkSize``.
        public var chunkSize: Int
        /// The longest a sealed durable file waits for its batch's `syncfs(2)`, in
        /// milliseconds (``Copier/SyncBatch``): 5; tests that fix a batch set more.
        ///
        /// Short, so that the batches follow each other as fast as the batch's thread commits
        /// them: the files sealed during one `syncfs(2)` make the next batch (a group commit),
        /// and the data reaches the device while the copies go on. Measured on the 2,000 files
        /// of `benchmarks/tree-copy.sh` (a loop ext4 image, 7 runs, `cp -a` then `sync` at
        /// 296–307 ms): 50 ms 334 ms, 20 ms 310, 10 ms 312, 5 ms 303–304, 1 ms 310; 150 ms 369,
        /// 400 ms 586.
        var syncBatchWaitMilliseconds = 5
        /// The longest a file that met `EMFILE` waits for descriptors while the files running
        /// move no byte and no batch is pending, in milliseconds
        /// (``Copier/waitForReleasedDescriptors(holding:)``): 10,000; tests set less.
        var descriptorWaitMilliseconds = 10_000
        /// Whether durable files share a `syncfs(2)` per batch (``Copier/SyncBatch``) and each
        /// directory one `fsync(2)` in ``Copier/finish()``; `false`: each file syncs its data
        /// before its rename and its directory after it, at once, on its own thread, as a
        /// ``FileSink`` alone does: the `sluice` command's transfer run alone (one file: a batch
        /// would only wait for it).
        package var batchesSyncs = true
        /// Whether each file's reader and sink run on threads of their own, so that its reads
        /// and writes overlap, instead of both on the file's slot (where many files in flight
        /// overlap with each other, and a hand-off wakes no thread): the `sluice` command's
        /// transfer run alone, one file with nothing else to overlap (its pipeline on one
        /// thread took 1.36x the time, `--chunk-size 4K` 1.46x, on tmpfs).
        package var overlapsReadsAndWrites = false
        /// Paths, holes, CRC-32, rate and verification of each file (``FileOptions``; the
        /// verification unless a job sets its own). Its pipeline's capacity is the most chunks
        /// per channel of a file (fewer when the file's share of ``byteBudget`` holds fewer;
        /// default 4); its pipeline's byte budget is set per file, from that share.
        public var copy: FileOptions
        /// How each file is written: replace an existing file or not, `fsync(2)` or not
        /// (`--no-fsync`), the source's attributes kept or not (`--preserve`; a tree's
        /// directories and links too), and holes (`--sparse`: the copier opens each source to
        /// match). Default: durable, never replacing, keeping only the permission bits, holes
        /// `auto`. Its ``FileSink/Options/synchronizesDirectory`` is not used: the copier syncs
        /// each directory once for all its files (``Copier/finish()``).
        public var sink: FileSink.Options

        /// The rate each file's pipeline moves at (`--limit-rate`): ``copy``'s
        /// ``FileOptions/pipeline`` ``PipelineOptions/rateLimit``, at hand. Default `nil`: unlimited.
        public var rateLimit: RateLimiter? {
            get { copy.pipeline.rateLimit }
            set { copy.pipeline.rateLimit = newValue }
        }
        /// Whether each file is read back and checked before its commit (`--verify`): ``copy``'s
        /// ``FileOptions/pipeline`` ``PipelineOptions/verifiesOutput``, at hand. Default `false`.
        public var verifiesOutput: Bool {
            get { copy.pipeline.verifiesOutput }
            set { copy.pipeline.verifiesOutput = newValue }
        }

        /// Four times the processors this process may run on, from 4 to 64.
        ///
        /// A file in flight spends most of its time in system calls that wait (`open(2)`,
        /// `fsync(2)`, `rename(2)`, a kernel copy), each on the file's own thread, not on a
        /// processor: several files per processor keep the processors and the device busy,
        /// and durable files share one `syncfs(2)` per batch whatever the width. More than a few
        /// per processor only adds threads.
        public static var defaultWidth: Int {
            min(widthRange.upperBound, max(widthRange.lowerBound, widthPerProcessor * ProcessorAffinity.availableProcessorCount()))
        }

        /// Files in flight per processor this process may run on, in ``defaultWidth``.
        package static let widthPerProcessor = 4
        /// The fewest and the most files in flight ``defaultWidth`` gives.
        package static let widthRange = 4...64
        /// The default ``byteBudget``, in bytes: 32 MiB.
        public static let defaultByteBudget = 32 << 20

        /// Creates options.
        ///
        /// - Precondition: `width`, `byteBudget` and `chunkSize` >= 1.
        public init(
            width: Int = defaultWidth, byteBudget: Int = defaultByteBudget, chunkSize: Int = FileChunks.defaultChunkSize,
            copy: FileOptions = .init(), sink: FileSink.Options = .init()
        ) {
            precondition(width >= 1 && byteBudget >= 1 && chunkSize >= 1, "sizes must be at least 1")
            self.width = width
            self.byteBudget = byteBudget
            self.chunkSize = chunkSize
            self.copy = copy
            self.sink = sink
        }
    }
}

extension Copier {
    /// How each file is copied: which paths it may take (a clone, a copy in the kernel, the
    /// pipeline), and the pipeline's sizes, CRC-32, rate and verification when it runs
    /// (``Copier/Options/copy``). Its holes are the sink's (``Copier/Options/sink``).
    public struct FileOptions: Sendable, Hashable {
        /// Whether the destination may share the source's extents (`--reflink`). Default ``Copier/ReflinkMode/auto``.
        public var reflink: Copier.ReflinkMode
        /// Whether the destination gets holes: the copier's ``Copier/Options/sink``'s, set on
        /// each file's options when it starts, so that the source is opened to match.
        package var holes: FileChunks.HoleMode
        /// Copy through the pipeline whatever the table says (`--pipeline`; an explicit
        /// `--chunk-size` or `--capacity` implies it). Default `false`.
        public var forcesPipeline: Bool
        /// How the pipeline is sized, when it runs: its `capacity` is the most chunks a file's
        /// channel holds and its `byteBudget` the most bytes (fewer when the file's share of
        /// ``Copier/Options/byteBudget`` holds fewer); its CRC-32, rate and verification apply
        /// to every file.
        public var pipeline: PipelineOptions
        /// The most bytes one `copy_file_range(2)` is asked for: the step of progress and of
        /// cancellation on the kernel path. Default 4 MiB.
        package var sliceSize: Int
        /// The largest source, in bytes, copied by `copy_file_range(2)` on one file system
        /// where the table would take the pipeline (a file system it does not name): see
        /// `CopyMethod.chain`.
        /// Default 0 (the table alone); ``Copier`` raises it to its chunk size.
        package var kernelCopyLimit: Int64 = 0

        /// Whether the source is opened to find its holes: as ``holes`` says, and never for a
        /// verified copy, which reads every byte rather than believe the hole map.
        package var findsHoles: Bool { holes.findsHoles(verifying: pipeline.verifiesOutput) }

        /// The slice of a kernel copy unless a test sets one: 4 MiB.
        package static let defaultSliceSize = 4 << 20

        /// Creates options.
        public init(reflink: ReflinkMode = .auto, forcesPipeline: Bool = false, pipeline: PipelineOptions = .init()) {
            self.init(reflink: reflink, holes: .auto, forcesPipeline: forcesPipeline, pipeline: pipeline, sliceSize: Self.defaultSliceSize)
        }

        /// The same, with the holes (the copier sets them from its sink's) and the slice of a
        /// kernel copy (tests set smaller ones).
        ///
        /// - Precondition: `sliceSize >= 1`.
        package init(
            reflink: ReflinkMode = .auto, holes: FileChunks.HoleMode = .auto, forcesPipeline: Bool = false,
            pipeline: PipelineOptions = .init(), sliceSize: Int
        ) {
            precondition(sliceSize >= 1, "sliceSize must be at least 1 byte")
            self.reflink = reflink
            self.holes = holes
            self.forcesPipeline = forcesPipeline
            self.pipeline = pipeline
            self.sliceSize = sliceSize
        }
    }
}
