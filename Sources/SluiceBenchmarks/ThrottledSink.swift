import Sluice

/// A sink that forwards to another but never faster than `bytesPerSecond`: a stand-in for a slow
/// disk or network, the benchmark's slow consumer and the `CallbackIngest` example's.
///
/// Each write goes to `base` first; then the sink sleeps until the moment the bytes written so
/// far are due at that rate, counted from the first write. It sleeps with `Task.sleep`, so it
/// suspends without holding a thread. Copies of the sink share one count (a `Pipeline` may hold
/// more than one copy).
public struct ThrottledSink<Base: ChunkSink>: ChunkSink {
    private let base: Base
    private let bytesPerSecond: Int64?
    private let clock = Clock()

    /// Wraps `base`.
    ///
    /// - Parameters:
    ///   - base: where the chunks go.
    ///   - bytesPerSecond: the most bytes per second passed on; `nil` (or a value below 1) means
    ///     no throttle.
    public init(_ base: Base, bytesPerSecond: Int64?) {
        self.base = base
        self.bytesPerSecond = bytesPerSecond
    }

    /// Writes the chunk to the wrapped sink, then sleeps until the average rate since the first
    /// write is at most the limit.
    ///
    /// - Throws: what the wrapped sink's `write` throws; `CancellationError` when the task is
    ///   cancelled while it sleeps.
    public func write(_ chunk: Chunk) async throws {
        try await base.write(chunk)
        guard let bytesPerSecond, bytesPerSecond > 0 else { return }
        let wait = await clock.add(Int64(chunk.count), rate: bytesPerSecond)
        if wait > .zero { try await Task.sleep(for: wait) }
    }

    /// Writes the chunks to the wrapped sink in one call (one `writev(2)` for a file), then
    /// sleeps until the average rate since the first write is at most the limit.
    ///
    /// - Throws: what the wrapped sink's `write(contentsOf:)` throws; `CancellationError` when
    ///   the task is cancelled while it sleeps.
    public func write(contentsOf chunks: [Chunk]) async throws {
        try await base.write(contentsOf: chunks)
        guard let bytesPerSecond, bytesPerSecond > 0 else { return }
        let wait = await clock.add(chunks.reduce(0) { $0 + Int64($1.count) }, rate: bytesPerSecond)
        if wait > .zero { try await Task.sleep(for: wait) }
    }

    /// The wrapped sink's executor: the writer stage runs on the thread that writes.
    public var preferredExecutor: (any TaskExecutor)? { base.preferredExecutor }

    /// Commits the wrapped sink.
    ///
    /// - Throws: what the wrapped sink's `commit` throws.
    public func commit() async throws { try await base.commit() }

    /// Aborts the wrapped sink.
    public func abort() async { await base.abort() }

    /// Bytes written and the instant of the first write, shared by the copies of the sink.
    actor Clock {
        private var start: ContinuousClock.Instant?
        private(set) var bytes: Int64 = 0

        /// Adds `count` bytes and returns how long to wait (zero or less: none) for the total so
        /// far to be due at `rate` bytes per second.
        func add(_ count: Int64, rate: Int64) -> Duration {
            let now = ContinuousClock.now
            let start = self.start ?? now
            self.start = start
            bytes += count
            return .transferTime(of: bytes, atBytesPerSecond: rate) - (now - start)
        }
    }
}

extension Duration {
    /// How long `bytes` take at `bytesPerSecond`, rounded down to the nanosecond.
    ///
    /// Whole seconds and the remainder are computed apart, the remainder's nanoseconds in 128
    /// bits, so no product can overflow: any byte count from 0 to `Int64.max` at any rate from
    /// 1 works (`bytes × 10⁹` alone overflows `Int64` past about 8.6 GiB).
    static func transferTime(of bytes: Int64, atBytesPerSecond bytesPerSecond: Int64) -> Duration {
        precondition(bytes >= 0 && bytesPerSecond >= 1)
        let (seconds, remainder) = bytes.quotientAndRemainder(dividingBy: bytesPerSecond)
        // remainder < bytesPerSecond, so remainder × 10⁹ / bytesPerSecond < 10⁹.
        let nanoseconds = bytesPerSecond.dividingFullWidth(remainder.multipliedFullWidth(by: 1_000_000_000)).quotient
        return .seconds(seconds) + .nanoseconds(nanoseconds)
    }
}
