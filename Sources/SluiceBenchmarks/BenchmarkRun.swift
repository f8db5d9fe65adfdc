/// What one run of one design measured (in the child process that ran it).
public struct BenchmarkRun: Sendable, Hashable, Codable {
    /// The design measured.
    public var design: BenchmarkDesign
    /// The consumer used.
    public var consumer: BenchmarkConsumer
    /// Bytes the consumer wrote: the whole input for a run that completed, only what arrived
    /// before the failure for one that did not (a `push-fail` run stops after a few chunks).
    public var bytesMoved: Int64
    /// Wall-clock seconds of the run: input opened to output complete, as the child measures
    /// it; `sluice bench` records the child's spawn to exit instead, as it times `cp` and `cat`.
    public var seconds: Double
    /// Peak resident set size in bytes: the kernel's high-water mark for the child
    /// (`ru_maxrss` from `wait4(2)` on it, or `VmHWM` read in the child at exit).
    public var peakResidentBytes: Int64
    /// The most bytes buffered between producer and consumer at any sample.
    public var peakBufferedBytes: Int64
    /// How the run ended.
    public var outcome: BenchmarkOutcome
    /// RSS and buffered bytes over time (at most a few hundred points).
    public var samples: [MemorySample]
    /// Chunks the push buffer wrote to its spill file: the backlog that did not stay in memory
    /// (`push-spill`; 0 for the other designs).
    public var spilledChunks: Int
    /// Bytes per chunk the run read and wrote (0 when not known).
    public var chunkBytes: Int
    /// CPU seconds of the child that ran it, user and system, from `wait4(2)`'s `rusage` on that
    /// child (0 until the parent that waited for it sets it: the child cannot count its own exit).
    public var cpuSeconds: Double

    /// Throughput in MiB per second, for a run that completed; `nil` for one that failed (bytes
    /// over the time to the failure would be a speed nobody gets).
    public var mebibytesPerSecond: Double? {
        outcome == .ok && seconds > 0 ? Double(bytesMoved) / 1_048_576 / seconds : nil
    }

    /// Creates a run record.
    public init(
        design: BenchmarkDesign, consumer: BenchmarkConsumer, bytesMoved: Int64, seconds: Double,
        peakResidentBytes: Int64, peakBufferedBytes: Int64, outcome: BenchmarkOutcome, samples: [MemorySample],
        spilledChunks: Int = 0, chunkBytes: Int = 0, cpuSeconds: Double = 0
    ) {
        self.design = design
        self.consumer = consumer
        self.bytesMoved = bytesMoved
        self.seconds = seconds
        self.peakResidentBytes = peakResidentBytes
        self.peakBufferedBytes = peakBufferedBytes
        self.outcome = outcome
        self.samples = samples
        self.spilledChunks = spilledChunks
        self.chunkBytes = chunkBytes
        self.cpuSeconds = cpuSeconds
    }
}
