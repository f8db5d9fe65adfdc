/// Holds chunks back to a rate: the ``TokenBucket`` and the clock it is read and slept on.
///
/// The clock is the seam that makes pacing testable: a test passes a clock whose `sleep`
/// advances its own time and returns at once, and sees exactly the waits the bucket asked for,
/// with no real sleep. The wait is `Clock.sleep(for:)`, an asynchronous suspension: no thread is
/// blocked, whichever executor the pacing task runs on.
///
/// Concurrency contract: a value confined to the one stage that paces (it is mutated by each
/// ``admit(_:)``); the clock it holds is `Sendable`.
struct ChunkPacer: Sendable {
    private var bucket: TokenBucket
    /// The clock's time since the pacer was made.
    private let now: @Sendable () -> Duration
    private let sleep: @Sendable (Duration) async throws -> Void
    /// Called with each chunk's size as it is let through (a pipeline counts its progress
    /// there); `nil` for none.
    var admitted: (@Sendable (Int) -> Void)?

    /// Creates a pacer at `bytesPerSecond` on `clock`.
    ///
    /// - Precondition: `bytesPerSecond >= 1`.
    init<C: Clock>(bytesPerSecond: Int64, clock: C) where C.Duration == Duration {
        bucket = TokenBucket(bytesPerSecond: bytesPerSecond)
        let origin = clock.now
        now = { origin.duration(to: clock.now) }
        sleep = { try await clock.sleep(for: $0) }
    }

    /// The rate, in bytes per second.
    var bytesPerSecond: Int64 { bucket.bytesPerSecond }

    /// Returns once a chunk of `bytes` bytes may go, having waited as long as the bucket asks.
    ///
    /// - Throws: `CancellationError` when the task is cancelled during a wait (what the clock's
    ///   `sleep` throws).
    mutating func admit(_ bytes: Int) async throws {
        while case .wait(let duration) = bucket.take(bytes, at: now()) {
            try await sleep(duration)
        }
        admitted?(bytes)
    }
}
