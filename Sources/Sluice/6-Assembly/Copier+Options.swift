extension Copier {
    /// How many files move at once, and the bound on what they buffer together.
    public struct Options: Sendable, Hashable {
        /// The most files in flight (>= 1), within the process's share of open files (under a
        /// low `ulimit -n`, fewer). Default
        /// ``defaultWidth``.
        public var width: Int
        /// The bytes all files in flight may buffer together (>= 1). Default 32 MiB.
        public var byteBudget: Int
        /// The largest chunk of a file's pipeline; a smaller file reads in chunks of its own
        /// size (rounded up to 4 KiB). Default ``FileChunks/defaultChunkSize``.
        public var chunkSize: Int
        /// The longest a sealed durable file waits for its batch's `syncfs(2)`, in
        /// milliseconds (``Copier/SyncBatch``): 50; tests that fix a batch set more.
        var syncBatchWaitMilliseconds = 50
        /// The longest a file that met `EMFILE` waits for descriptors while the files running
        /// move no byte and no batch is pending, in milliseconds
        /// (``Copier/waitForReleasedDescriptors(holding:)``): 10,000; tests set less.
        var descriptorWaitMilliseconds = 10_000
        /// Paths, holes, CRC-32, rate and verification of each file (``FileOptions``; the
        /// verification unless a job sets its own). Its pipeline's capacity is the most chunks
        /// per channel of a file (fewer when the file's share of ``byteBudget`` holds fewer;
        /// default 4); its pipeline's byte budget is set per file, from that share.
        public var copy: FileOptions

        /// Four times the processors this process may run on, from 4 to 64.
        ///
        /// A file in flight spends most of its time in system calls that wait (`open(2)`,
        /// `fsync(2)`, `rename(2)`, a kernel copy), each on the file's own thread, not on a
        /// processor: several files per processor keep the processors and the device busy,
        /// and durable files share one `syncfs(2)` per batch whatever the width. More than a few
        /// per processor only adds threads.
        public static var defaultWidth: Int {
            min(64, max(4, 4 * ProcessorAffinity.availableProcessorCount()))
        }

        /// Creates options.
        ///
        /// - Precondition: `width`, `byteBudget` and `chunkSize` >= 1.
        public init(
            width: Int = defaultWidth, byteBudget: Int = 32 << 20, chunkSize: Int = FileChunks.defaultChunkSize,
            copy: FileOptions = .init()
        ) {
            precondition(width >= 1 && byteBudget >= 1 && chunkSize >= 1, "sizes must be at least 1")
            self.width = width
            self.byteBudget = byteBudget
            self.chunkSize = chunkSize
            self.copy = copy
        }

        /// 0.1's per-file capacity, now the copy options' own (each setting in one place).
        @available(*, unavailable, message: "set copy.pipeline.capacity")
        public var capacity: Int { get { copy.pipeline.capacity } set { copy.pipeline.capacity = newValue } }

        /// 0.1's initializer with the per-file capacity, now the copy options' own.
        @available(*, unavailable, message: "pass the capacity in copy.pipeline: init(width:byteBudget:chunkSize:copy:)")
        public init(width: Int, byteBudget: Int, chunkSize: Int, capacity: Int, copy: FileOptions) {
            self.init(width: width, byteBudget: byteBudget, chunkSize: chunkSize, copy: copy)
            self.copy.pipeline.capacity = capacity
        }
    }
}

extension Copier {
    /// How each file is copied: which paths it may take (a clone, a copy in the kernel, the
    /// pipeline), how its holes are kept, and the pipeline's sizes, CRC-32, rate and
    /// verification when it runs (``Copier/Options/copy``).
    public struct FileOptions: Sendable, Hashable {
        /// Whether the destination may share the source's extents (`--reflink`). Default ``Copier/ReflinkMode/auto``.
        public var reflink: Copier.ReflinkMode
        /// Whether the destination gets holes (`--sparse`). Default ``FileChunks/SparseMode/auto``. It must
        /// match the sink's ``FileSink/Options/sparse`` and how the source was opened.
        public var sparse: FileChunks.SparseMode
        /// Copy through the pipeline whatever the table says (`--pipeline`; an explicit
        /// `--chunk-size` or `--capacity` implies it). Default `false`.
        public var forcesPipeline: Bool
        /// How the pipeline is sized, when it runs.
        public var pipeline: PipelineOptions
        /// The most bytes one `copy_file_range(2)` is asked for: the step of progress and of
        /// cancellation on the kernel path. Default 4 MiB.
        package var sliceSize: Int
        /// The largest source, in bytes, copied by `copy_file_range(2)` on one file system
        /// where the table would take the pipeline (a file system it does not name): see
        /// `CopyMethod.chain`.
        /// Default 0 (the table alone); ``Copier`` raises it to its chunk size.
        package var kernelCopyLimit: Int64 = 0

        /// Creates options.
        public init(
            reflink: ReflinkMode = .auto, sparse: FileChunks.SparseMode = .auto, forcesPipeline: Bool = false,
            pipeline: PipelineOptions = .init()
        ) {
            self.init(reflink: reflink, sparse: sparse, forcesPipeline: forcesPipeline, pipeline: pipeline, sliceSize: 4 << 20)
        }

        /// The same, with the slice of a kernel copy (tests set smaller ones).
        ///
        /// - Precondition: `sliceSize >= 1`.
        package init(
            reflink: ReflinkMode = .auto, sparse: FileChunks.SparseMode = .auto, forcesPipeline: Bool = false,
            pipeline: PipelineOptions = .init(), sliceSize: Int
        ) {
            precondition(sliceSize >= 1, "sliceSize must be at least 1 byte")
            self.reflink = reflink
            self.sparse = sparse
            self.forcesPipeline = forcesPipeline
            self.pipeline = pipeline
            self.sliceSize = sliceSize
        }
    }
}
