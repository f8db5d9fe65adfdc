import Sluice

/// The designs `sluice bench` compares, each moving the same file to a file.
public enum BenchmarkDesign: String, CaseIterable, Sendable, Codable {
    /// A producer task reads chunks as fast as it can and yields them into an `AsyncStream` with
    /// default (unbounded) buffering; a consumer task writes them.
    case unboundedStream = "unbounded-stream"
    /// The Sluice pipeline, user-space path: ``FileChunks`` → ``BoundedChannel`` → sink.
    case boundedPull = "bounded-pull"
    /// A producer thread that cannot pause, into a ``PushBuffer`` with the `.fail` policy: with a
    /// slow consumer it must end with ``CapacityExceededError``.
    case pushFail = "push-fail"
    /// The same producer into a ``PushBuffer`` that spills to disk: it must deliver everything.
    case pushSpill = "push-spill"
}

/// How fast the benchmark's consumer writes.
public enum BenchmarkConsumer: String, CaseIterable, Sendable, Codable {
    /// Plain file writes, as fast as the disk takes them.
    case fast
    /// Writes throttled to a rate in bytes per second, well below the reader's speed.
    case slow
}

/// How one benchmark run ended.
public enum BenchmarkOutcome: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Every byte arrived.
    case ok
    /// A push source met its capacity with the `.fail` policy (expected for `push-fail`).
    case capacityExceeded
    /// Anything else, with its message.
    case error(String)

    public var description: String {
        switch self {
        case .ok: return "ok"
        case .capacityExceeded: return "capacity-exceeded"
        case .error(let message): return "error: \(message)"
        }
    }
}

/// One sample of a run's memory: time since the start, resident set size, and bytes buffered
/// between producer and consumer.
public struct MemorySample: Sendable, Hashable, Codable {
    /// Seconds since the run started.
    public var seconds: Double
    /// Resident set size in bytes (`VmRSS`).
    public var residentBytes: Int64
    /// Bytes produced and not yet consumed.
    public var bufferedBytes: Int64

    /// Creates a sample.
    public init(seconds: Double, residentBytes: Int64, bufferedBytes: Int64) {
        self.seconds = seconds
        self.residentBytes = residentBytes
        self.bufferedBytes = bufferedBytes
    }
}

/// What one run of one design measured (in the child process that ran it).
public struct BenchmarkRun: Sendable, Hashable, Codable {
    /// The design measured.
    public var design: BenchmarkDesign
    /// The consumer used.
    public var consumer: BenchmarkConsumer
    /// Bytes of input.
    public var inputBytes: Int64
    /// Wall-clock seconds of the run (input opened to output complete).
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

    /// Throughput in MiB per second of input.
    public var mebibytesPerSecond: Double {
        seconds > 0 ? Double(inputBytes) / 1_048_576 / seconds : 0
    }

    /// Creates a run record.
    public init(
        design: BenchmarkDesign, consumer: BenchmarkConsumer, inputBytes: Int64, seconds: Double,
        peakResidentBytes: Int64, peakBufferedBytes: Int64, outcome: BenchmarkOutcome, samples: [MemorySample]
    ) {
        self.design = design
        self.consumer = consumer
        self.inputBytes = inputBytes
        self.seconds = seconds
        self.peakResidentBytes = peakResidentBytes
        self.peakBufferedBytes = peakBufferedBytes
        self.outcome = outcome
        self.samples = samples
    }
}
