/// The pacing rule of a rate limit: a token bucket that fills at ``bytesPerSecond`` and holds at
/// most one chunk's worth of tokens (the largest chunk seen so far); a chunk goes once the bucket
/// holds all of its bytes, and takes them.
///
/// Kept as the bucket's arrival-time equivalent (the generic cell rate algorithm of ITU-T I.371),
/// as a schedule of reservations: ``readyAt`` is the instant at which every byte reserved so far
/// is paid for, and a chunk of `n` bytes asked for at `now` goes at
/// `max(now, readyAt + cost(n) - depth)`, where `cost(n)` is `n / bytesPerSecond` seconds and
/// `depth` the cost of the largest chunk. Its bytes are reserved at once, so callers that ask
/// concurrently (every file of a tree sharing one ``RateLimiter``) go in the order they asked,
/// each after the one before it, and together keep the rate. A bucket that has been idle is full
/// (one chunk goes at once), and never fuller: the burst after a pause is one chunk. The schedule
/// never depends on when a sleep ends: a wake-up that comes late (timer slack, a busy thread;
/// about 3 ms here) is made up by the next chunk, whose time was fixed when it asked, so the rate
/// holds over many chunks. All arithmetic is on `Duration`, exactly, so a test clock sees the
/// same waits on every run.
///
/// A value-type state machine: ``reserve(_:at:)`` is its one event and returns when to go.
/// It neither reads a clock nor sleeps; ``RateLimiter`` does both, through an injectable clock.
struct TokenBucket: Sendable, Hashable {
    /// The rate the bucket fills at, in bytes per second (>= 1).
    let bytesPerSecond: Int64
    /// The instant every byte reserved so far is paid for; `nil` before the first chunk.
    private(set) var readyAt: Duration?
    /// The time the largest chunk seen so far takes to pay for: the bucket's depth.
    private(set) var depth: Duration = .zero

    /// Creates an empty schedule (the first chunk goes at once).
    ///
    /// - Precondition: `bytesPerSecond >= 1`.
    init(bytesPerSecond: Int64) {
        precondition(bytesPerSecond >= 1, "a rate limit must be at least 1 byte per second")
        self.bytesPerSecond = bytesPerSecond
    }

    /// The time `bytes` bytes take at ``bytesPerSecond``.
    func cost(of bytes: Int) -> Duration {
        .seconds(Int64(bytes)) / bytesPerSecond
    }

    /// Reserves the bytes of a chunk asked for at `now`.
    ///
    /// - Parameters:
    ///   - bytes: the chunk's size (>= 0; an empty chunk always goes at once and costs nothing).
    ///   - now: the current time, as a duration since any fixed origin the caller keeps.
    /// - Returns: the instant the chunk may go, on the same origin as `now` (`now` itself: at
    ///   once). The bytes are paid for whether or not the caller waits until then.
    mutating func reserve(_ bytes: Int, at now: Duration) -> Duration {
        let cost = cost(of: bytes)
        depth = max(depth, cost)
        let paid = max(readyAt ?? now, now) + cost
        readyAt = paid
        return max(now, paid - depth)
    }
}
