import Dispatch
import Sluice
import Synchronization

/// Samples RSS and buffered bytes on a thread of its own at a fixed interval, so a run's memory
/// over time can be plotted. Sampling reads `/proc/self/status`; it costs microseconds.
public final class MemorySampler: Sendable {
    private let samples = Mutex<[MemorySample]>([])
    private let running = Atomic<Bool>(true)
    private let done = DispatchSemaphore(value: 0)

    /// Starts sampling every `interval` seconds; `bufferedBytes` is called on the sampling thread.
    public init(interval: Double = 0.01, bufferedBytes: @escaping @Sendable () -> Int64) {
        let start = ContinuousClock.now
        DedicatedThread.start(name: "sluice.bench.sampler") { [self] in
            while running.load(ordering: .relaxed) {
                let elapsed = ContinuousClock.now - start
                let seconds = elapsed.benchmarkSeconds
                let sample = MemorySample(
                    seconds: seconds, residentBytes: ProcessMemory.residentBytes(), bufferedBytes: bufferedBytes())
                samples.withLock { $0.append(sample) }
                DedicatedThread.sleep(until: .now + .seconds(interval))
            }
            done.signal()
        }
    }

    /// Stops sampling and returns at most `maximumCount` samples, evenly thinned.
    public func stop(maximumCount: Int = 400) -> [MemorySample] {
        running.store(false, ordering: .relaxed)
        done.wait()
        let all = samples.withLock { $0 }
        guard all.count > maximumCount else { return all }
        let step = Double(all.count) / Double(maximumCount)
        return (0..<maximumCount).map { all[Int(Double($0) * step)] }
    }
}

extension Duration {
    /// The duration in seconds as a `Double`, for the benchmark's records.
    var benchmarkSeconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }
}
