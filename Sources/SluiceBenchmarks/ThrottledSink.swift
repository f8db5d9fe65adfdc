import Sluice

/// A sink that forwards to another but never faster than `bytesPerSecond`: the benchmark's slow
/// consumer. It waits with `Task.sleep`, so it suspends without blocking a thread.
public struct ThrottledSink<Base: ChunkSink>: ChunkSink {
    private let base: Base
    private let bytesPerSecond: Int64?
    private let clock = Clock()

    /// Wraps `base`; `bytesPerSecond == nil` means no throttle.
    public init(_ base: Base, bytesPerSecond: Int64?) {
        self.base = base
        self.bytesPerSecond = bytesPerSecond
    }

    /// Writes the chunk, then sleeps until the average rate since the first write is at most
    /// the limit.
    public func write(_ chunk: Chunk) async throws {
        try await base.write(chunk)
        guard let bytesPerSecond, bytesPerSecond > 0 else { return }
        let due = await clock.add(Int64(chunk.count), rate: bytesPerSecond)
        if due > .zero { try await Task.sleep(for: due) }
    }

    /// Commits the wrapped sink.
    public func commit() async throws { try await base.commit() }
    /// Aborts the wrapped sink.
    public func abort() async { await base.abort() }

    /// Bytes written and the start instant, shared by the copies of the sink.
    private actor Clock {
        var start: ContinuousClock.Instant?
        var bytes: Int64 = 0

        /// Adds `count` bytes and returns how long to wait to keep to `rate`.
        func add(_ count: Int64, rate: Int64) -> Duration {
            let now = ContinuousClock.now
            let start = self.start ?? now
            self.start = start
            bytes += count
            let target = Duration.nanoseconds(Int64(Double(bytes) / Double(rate) * 1e9))
            return target - (now - start)
        }
    }
}
