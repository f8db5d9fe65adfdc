#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Sluice
import Synchronization

/// Runs one design once, in the current process (the child that `sluice bench` starts for it).
public enum BenchmarkScenario {
    /// What a run needs.
    public struct Parameters: Sendable {
        /// The design to run.
        public var design: BenchmarkDesign
        /// The consumer to use.
        public var consumer: BenchmarkConsumer
        /// The file to read.
        public var input: Pathname
        /// The file to write (replaced; no fsync).
        public var output: Pathname
        /// The slow consumer's rate in bytes per second.
        public var sinkRate: Int64
        /// Bytes per chunk.
        public var chunkSize: Int
        /// Chunks buffered between stages (bounded-pull) or in the push buffer.
        public var capacity: Int
        /// The spill directory for `push-spill`.
        public var spillDirectory: Pathname

        /// Creates parameters.
        public init(
            design: BenchmarkDesign, consumer: BenchmarkConsumer, input: Pathname, output: Pathname,
            sinkRate: Int64, chunkSize: Int = 1 << 20, capacity: Int = 4, spillDirectory: Pathname
        ) {
            self.design = design
            self.consumer = consumer
            self.input = input
            self.output = output
            self.sinkRate = sinkRate
            self.chunkSize = chunkSize
            self.capacity = capacity
            self.spillDirectory = spillDirectory
        }
    }

    /// Runs the design and measures it. Writes with `--no-fsync` semantics (no fsync of the
    /// output or its directory), so the disk's flush time is not measured.
    public static func run(_ parameters: Parameters) async -> BenchmarkRun {
        let gauge = BufferGauge()
        let sampler = MemorySampler { gauge.current }
        let start = ContinuousClock.now
        var bytesMoved: Int64 = 0
        var outcome = BenchmarkOutcome.ok
        do {
            let sink = ThrottledSink(
                try await FileSink.create(at: parameters.output, options: .init(replacesExisting: true, synchronizes: false)),
                bytesPerSecond: parameters.consumer == .slow ? parameters.sinkRate : nil)
            switch parameters.design {
            case .unboundedStream:
                bytesMoved = try await runUnboundedStream(parameters, sink: sink, gauge: gauge)
            case .boundedPull:
                bytesMoved = try await runBoundedPull(parameters, sink: sink, gauge: gauge)
            case .pushFail, .pushSpill:
                bytesMoved = try await runPush(parameters, sink: sink, gauge: gauge)
            }
        } catch is CapacityExceededError {
            outcome = .capacityExceeded
            bytesMoved = gauge.written
        } catch {
            outcome = .error(String(describing: error))
            bytesMoved = gauge.written
        }
        let elapsed = ContinuousClock.now - start
        let samples = sampler.stop()
        return BenchmarkRun(
            design: parameters.design, consumer: parameters.consumer, bytesMoved: bytesMoved,
            seconds: elapsed.benchmarkSeconds,
            peakResidentBytes: ProcessMemory.peakResidentBytes(),
            peakBufferedBytes: gauge.reportedPeak ?? max(samples.map(\.bufferedBytes).max() ?? 0, gauge.peak),
            outcome: outcome, samples: samples, spilledChunks: gauge.spilledChunks, chunkBytes: parameters.chunkSize)
    }

    /// The unbounded design: a producer task reads as fast as it can and yields into an
    /// `AsyncStream` with its default `.unbounded` buffering; the consumer writes.
    static func runUnboundedStream(
        _ parameters: Parameters, sink: some ChunkSink, gauge: BufferGauge
    ) async throws -> Int64 {
        let (stream, continuation) = AsyncStream<Chunk>.makeStream()
        let source = try await FileChunks.open(parameters.input, chunkSize: parameters.chunkSize)
        let producer = Task {
            var total: Int64 = 0
            do {
                for try await chunk in source {
                    gauge.produced(chunk.count)
                    total += Int64(chunk.count)
                    continuation.yield(chunk)
                }
            } catch {}
            continuation.finish()
            return total
        }
        do {
            for await chunk in stream {
                try await sink.write(chunk)
                gauge.consumed(chunk.count)
            }
            try await sink.commit()
        } catch {
            producer.cancel()
            await sink.abort()
            throw error
        }
        return await producer.value
    }

    /// The Sluice design: ``FileChunks`` → ``Pipeline`` (bounded channel) → sink.
    static func runBoundedPull(
        _ parameters: Parameters, sink: some ChunkSink, gauge: BufferGauge
    ) async throws -> Int64 {
        let source = try await FileChunks.open(parameters.input, chunkSize: parameters.chunkSize)
        let copy = Pipeline(
            from: source, to: sink, totalBytes: source.expectedSize,
            options: .init(capacity: parameters.capacity, byteBudget: parameters.capacity * parameters.chunkSize, computesCRC32: false))
        let updates = copy.progress.subscribe()
        let watcher = Task {
            for await snapshot in updates {
                gauge.set(snapshot.bufferedBytes)
                gauge.wrote(total: snapshot.bytesWritten)
            }
        }
        // The stream ends after the final snapshot, also of a failed run: its bytes are counted.
        let report: CopyReport
        do {
            report = try await copy.run()
        } catch {
            await watcher.value
            throw error
        }
        await watcher.value
        gauge.raisePeak(to: report.peakBufferedBytes)
        return report.bytesRead
    }

    /// The push designs: a thread that cannot pause reads the input as fast as it can and
    /// pushes each chunk into a ``PushBuffer`` (through the callback adapter); the consumer is the
    /// same ``Pipeline`` as `bounded-pull`. `push-fail` must end with ``CapacityExceededError``
    /// when the consumer is slow; `push-spill` must deliver everything.
    static func runPush(
        _ parameters: Parameters, sink: some ChunkSink, gauge: BufferGauge
    ) async throws -> Int64 {
        let policy: PushBuffer<Chunk>.OverflowPolicy = parameters.design == .pushSpill
            ? .spill(directory: parameters.spillDirectory, limit: Int64.max)
            : .fail
        let input = parameters.input
        let chunkSize = parameters.chunkSize
        let buffer = PushBuffer<Chunk>.fromCallbacks(
            capacity: parameters.capacity, byteBudget: parameters.capacity * parameters.chunkSize, policy: policy
        ) { deliver, complete in
            let producer = FileProducer(input: input, chunkSize: chunkSize, gauge: gauge, deliver: deliver, complete: complete)
            producer.start()
            return { producer.stop() }
        }
        let copy = Pipeline(
            from: buffer, to: sink, totalBytes: nil,
            options: .init(capacity: parameters.capacity, byteBudget: parameters.capacity * parameters.chunkSize, computesCRC32: false))
        let updates = copy.progress.subscribe()
        let watcher = Task {
            for await snapshot in updates { gauge.consumedTotal(snapshot.bytesWritten) }
        }
        // The stream ends after the final snapshot, also of a failed run: its bytes are counted.
        do {
            let report = try await copy.run()
            await watcher.value
            // In memory only: the push buffer's peak plus the pipeline's (spilled bytes wait on disk).
            gauge.reportPeak(buffer.statistics.peakBytesBuffered + report.peakBufferedBytes)
            gauge.reportSpilled(buffer.statistics.elementsSpilled)
            return report.bytesRead
        } catch {
            await watcher.value
            gauge.reportPeak(buffer.statistics.peakBytesBuffered)
            gauge.reportSpilled(buffer.statistics.elementsSpilled)
            throw error
        }
    }
}

/// A producer that cannot pause: reads a file on a thread of its own and pushes every chunk,
/// ignoring "pause", until the file ends, the buffer refuses a chunk, or it is stopped.
final class FileProducer: Sendable {
    private let input: Pathname
    private let chunkSize: Int
    private let gauge: BufferGauge
    private let deliver: @Sendable (Chunk) -> PushBuffer<Chunk>.YieldResult
    private let complete: @Sendable ((any Error)?) -> Void
    private let stopped = Atomic<Bool>(false)

    init(
        input: Pathname, chunkSize: Int, gauge: BufferGauge,
        deliver: @escaping @Sendable (Chunk) -> PushBuffer<Chunk>.YieldResult,
        complete: @escaping @Sendable ((any Error)?) -> Void
    ) {
        self.input = input
        self.chunkSize = chunkSize
        self.gauge = gauge
        self.deliver = deliver
        self.complete = complete
    }

    func start() {
        DedicatedThread.start(name: "sluice.bench.producer") { [self] in run() }
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
    }

    private func run() {
        do {
            let descriptor = try Descriptor.open(input, O_RDONLY)
            defer { try? descriptor.close() }
            while !stopped.load(ordering: .relaxed) {
                let chunk = try Chunk(capacity: chunkSize) { buffer in try descriptor.readFully(into: buffer) }
                if chunk.isEmpty { break }
                switch deliver(chunk) {
                case .enqueued, .spilled: gauge.produced(chunk.count)
                case .rejected, .terminated: return
                }
            }
            complete(nil)
        } catch {
            complete(error)
        }
    }
}

/// Bytes produced minus bytes consumed, and the peak of that; bytes written by the consumer;
/// thread-safe.
final class BufferGauge: Sendable {
    private let writtenTotal = Atomic<Int64>(0)
    private let buffered = Atomic<Int64>(0)
    private let peakValue = Atomic<Int64>(0)
    private let producedTotal = Atomic<Int64>(0)
    private let reported = Atomic<Int64>(-1)
    private let spilled = Atomic<Int>(0)

    /// A peak the design measured itself (bytes in memory), overriding produced minus consumed.
    var reportedPeak: Int64? {
        let value = reported.load(ordering: .relaxed)
        return value >= 0 ? value : nil
    }

    func reportPeak(_ value: Int64) {
        reported.store(value, ordering: .relaxed)
    }

    /// Chunks a push buffer spilled to disk, as the design reported them (0 if none did).
    var spilledChunks: Int { spilled.load(ordering: .relaxed) }

    func reportSpilled(_ count: Int) {
        spilled.store(count, ordering: .relaxed)
    }

    var current: Int64 { buffered.load(ordering: .relaxed) }

    /// Bytes the consumer wrote so far: what a failed run moved.
    var written: Int64 { writtenTotal.load(ordering: .relaxed) }

    /// Sets the bytes written from a running total (a progress snapshot's).
    func wrote(total: Int64) {
        writtenTotal.store(total, ordering: .relaxed)
    }
    var peak: Int64 { peakValue.load(ordering: .relaxed) }

    func produced(_ count: Int) {
        producedTotal.wrappingAdd(Int64(count), ordering: .relaxed)
        let now = buffered.wrappingAdd(Int64(count), ordering: .relaxed).newValue
        raisePeak(to: now)
    }

    func consumed(_ count: Int) {
        writtenTotal.wrappingAdd(Int64(count), ordering: .relaxed)
        buffered.wrappingSubtract(Int64(count), ordering: .relaxed)
    }

    /// Sets the buffered count from a total consumed so far (bytes produced minus `total`).
    func consumedTotal(_ total: Int64) {
        wrote(total: total)
        let now = producedTotal.load(ordering: .relaxed) - total
        buffered.store(now, ordering: .relaxed)
    }

    func set(_ value: Int64) {
        buffered.store(value, ordering: .relaxed)
        raisePeak(to: value)
    }

    func raisePeak(to value: Int64) {
        var seen = peakValue.load(ordering: .relaxed)
        while value > seen {
            let (exchanged, original) = peakValue.compareExchange(expected: seen, desired: value, ordering: .relaxed)
            if exchanged { return }
            seen = original
        }
    }
}
