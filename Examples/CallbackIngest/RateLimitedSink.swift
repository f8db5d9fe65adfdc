import Sluice

/// A ``ChunkSink`` that passes chunks to `base` no faster than `bytesPerSecond`: a stand-in for
/// a slow disk or network, so the example can show a producer outrunning its sink.
///
/// It sleeps (`Task.sleep`, so no thread is held) until the moment the bytes written so far are
/// due at that rate, counted from the first write.
actor RateLimitedSink<Base: ChunkSink>: ChunkSink {
    private let base: Base
    private let bytesPerSecond: Int64
    private var start: ContinuousClock.Instant?
    private var written: Int64 = 0

    /// - Parameters:
    ///   - base: where the chunks go.
    ///   - bytesPerSecond: the most bytes per second passed on; >= 1.
    init(_ base: Base, bytesPerSecond: Int64) {
        precondition(bytesPerSecond >= 1)
        self.base = base
        self.bytesPerSecond = bytesPerSecond
    }

    func write(_ chunk: Chunk) async throws {
        let start = self.start ?? ContinuousClock.now
        self.start = start
        written += Int64(chunk.count)
        let due = start + .nanoseconds(written * 1_000_000_000 / bytesPerSecond)
        if due > .now { try await Task.sleep(until: due, clock: .continuous) }
        try await base.write(chunk)
    }

    func commit() async throws {
        try await base.commit()
    }

    func abort() async {
        await base.abort()
    }
}
