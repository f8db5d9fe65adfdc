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
    /// Bytes the consumer wrote: the whole input for a run that completed, only what arrived
    /// before the failure for one that did not (a `push-fail` run stops after a few chunks).
    public var bytesMoved: Int64
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
    /// Chunks the push buffer wrote to its spill file: the backlog that did not stay in memory
    /// (`push-spill`; 0 for the other designs).
    public var spilledChunks: Int

    /// Throughput in MiB per second, for a run that completed; `nil` for one that failed (bytes
    /// over the time to the failure would be a speed nobody gets).
    public var mebibytesPerSecond: Double? {
        outcome == .ok && seconds > 0 ? Double(bytesMoved) / 1_048_576 / seconds : nil
    }

    /// Creates a run record.
    public init(
        design: BenchmarkDesign, consumer: BenchmarkConsumer, bytesMoved: Int64, seconds: Double,
        peakResidentBytes: Int64, peakBufferedBytes: Int64, outcome: BenchmarkOutcome, samples: [MemorySample],
        spilledChunks: Int = 0
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
    }
}

/// One timed run of a reference command (`cp`, `cat`) on the same input, in the same invocation
/// as the designs: a row of the CSV like theirs.
public struct ReferenceRun: Sendable, Hashable {
    /// The command's name: `cp` or `cat`.
    public var command: String
    /// Bytes copied (the input's size: a reference run that fails stops the benchmark).
    public var bytesMoved: Int64
    /// Wall-clock seconds from spawn to exit.
    public var seconds: Double

    /// Creates a reference run record.
    public init(command: String, bytesMoved: Int64, seconds: Double) {
        self.command = command
        self.bytesMoved = bytesMoved
        self.seconds = seconds
    }

    /// Throughput in MiB per second.
    public var mebibytesPerSecond: Double? {
        seconds > 0 ? Double(bytesMoved) / 1_048_576 / seconds : nil
    }
}
