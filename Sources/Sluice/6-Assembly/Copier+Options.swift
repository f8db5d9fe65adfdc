extension Copier {
    /// How many files move at once, and the bound on what they buffer together.
    public struct Options: Sendable, Hashable {
        /// The most files in flight (>= 1), within the process's
        /// `DescriptorBudget.filesInFlight` (under a low `ulimit -n`, fewer). Default
        /// ``defaultWidth``.
        public var width: Int
        /// The bytes all files in flight may buffer together (>= 1). Default 32 MiB.
        public var byteBudget: Int
        /// The largest chunk of a file's pipeline; a smaller file reads in chunks of its own
        /// size (rounded up to 4 KiB). Default ``FileChunks/defaultChunkSize``.
        public var chunkSize: Int
        /// The most chunks per channel of a file's pipeline; fewer when its share of the budget
        /// holds fewer. Default ``PipelineOptions/defaultCapacity(chunkSize:)``.
        public var capacity: Int
        /// The longest a sealed durable file waits for its batch's `syncfs(2)`, in
        /// milliseconds (``Copier/SyncBatch``): 50; tests that fix a batch set more.
        var syncBatchWaitMilliseconds = 50
        /// The longest a file that met `EMFILE` waits for descriptors while the files running
        /// move no byte and no batch is pending, in milliseconds
        /// (``Copier/waitForReleasedDescriptors(holding:)``): 10,000; tests set less.
        var descriptorWaitMilliseconds = 10_000
        /// Paths, holes, CRC-32, rate and verification of each file, as for one file
        /// (``RegularFileCopy/Options``; the verification unless a job sets its own); its
        /// pipeline capacity and byte budget are set per file.
        /// A job's own (``Job/copyOptions``, ``Job/chunkSize``) replace it and ``chunkSize``
        /// for that file.
        public var copy: RegularFileCopy.Options

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
        /// - Precondition: `width`, `byteBudget`, `chunkSize` and `capacity` >= 1.
        public init(
            width: Int = defaultWidth, byteBudget: Int = 32 << 20, chunkSize: Int = FileChunks.defaultChunkSize,
            capacity: Int = PipelineOptions.defaultCapacity(chunkSize: FileChunks.defaultChunkSize),
            copy: RegularFileCopy.Options = .init()
        ) {
            precondition(width >= 1 && byteBudget >= 1 && chunkSize >= 1 && capacity >= 1, "sizes must be at least 1")
            self.width = width
            self.byteBudget = byteBudget
            self.chunkSize = chunkSize
            self.capacity = capacity
            self.copy = copy
        }
    }
}
