/// One rate, in bytes per second, for a whole operation: every chunk of every file that is handed
/// the same limiter is charged to it (`--limit-rate`, as `rsync --bwlimit` and `pv -L` limit a
/// whole transfer).
///
/// `admit(_:)` returns once a chunk of that many bytes may go. The rule is a token bucket that
/// fills at ``bytesPerSecond`` and holds one chunk's worth (the largest chunk so far): after a
/// pause one chunk goes at once, never a burst of the pause's worth, and `n` chunks of `s` bytes
/// take `(n - 1) × s / rate` from the first to the last, whichever files they belong to. Callers
/// that ask at the same time go in the order they asked (each reserves its bytes when it asks).
/// A chunk should be small beside the rate (`sluice` uses at most 0.1 s of it) for the bytes to
/// flow evenly rather than in bursts.
///
/// ```swift
/// let limit = RateLimiter(bytesPerSecond: 1 << 20)             // 1 MiB/s for all the files
/// var options = PipelineOptions()
/// options.rateLimit = limit                                   // each copy given these options
/// ```
///
/// Concurrency contract: a reference shared by any number of tasks; `admit(_:)` may be called
/// from any of them at once. The wait is the clock's `sleep(until:tolerance:)` to the chunk's
/// instant, an asynchronous suspension that blocks no thread, whichever executor the caller runs on; cancelling the caller ends it
/// with `CancellationError` (the bytes it reserved stay charged). Two limiters are equal only
/// when they are the same object.
public final class RateLimiter: Sendable {
    private let bucket: LockedValue<TokenBucket>
    /// The clock's time since the limiter was made.
    private let now: @Sendable () -> Duration
    /// Sleeps until that long after the limiter was made: a deadline, not a length, so that
    /// the time between reading the clock and starting the sleep is not added to the wait.
    private let sleep: @Sendable (Duration) async throws -> Void

    /// The rate, in bytes per second (>= 1).
    public let bytesPerSecond: Int64

    /// Creates a limiter at `bytesPerSecond` on `clock`: the first chunk goes at once.
    ///
    /// - Parameters:
    ///   - bytesPerSecond: the rate, in bytes per second.
    ///   - clock: where time is read and waited on; a clock that advances when slept on makes
    ///     pacing deterministic in a test.
    /// - Precondition: `bytesPerSecond >= 1`.
    public init<C: Clock>(bytesPerSecond: Int64, clock: C) where C.Duration == Duration {
        precondition(bytesPerSecond >= 1, "a rate limit must be at least 1 byte per second")
        self.bytesPerSecond = bytesPerSecond
        bucket = LockedValue(TokenBucket(bytesPerSecond: bytesPerSecond))
        let origin = clock.now
        now = { origin.duration(to: clock.now) }
        sleep = { try await clock.sleep(until: origin.advanced(by: $0), tolerance: nil) }
    }

    /// Creates a limiter at `bytesPerSecond` on the `ContinuousClock`.
    ///
    /// - Precondition: `bytesPerSecond >= 1`.
    public convenience init(bytesPerSecond: Int64) {
        self.init(bytesPerSecond: bytesPerSecond, clock: ContinuousClock())
    }

    /// Returns once a chunk of `bytes` bytes may go, having waited as long as the rate asks.
    ///
    /// - Parameter bytes: the chunk's size (>= 0).
    /// - Throws: `CancellationError` when the calling task is cancelled during the wait.
    package func admit(_ bytes: Int) async throws {
        let asked = now()
        let goes = bucket.withLock { $0.reserve(bytes, at: asked) }
        if goes > asked { try await sleep(goes) }
    }
}

extension RateLimiter: Hashable {
    /// Whether the two are the same limiter (the same object, one rate shared).
    public static func == (lhs: RateLimiter, rhs: RateLimiter) -> Bool { lhs === rhs }

    /// Hashes the limiter's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
