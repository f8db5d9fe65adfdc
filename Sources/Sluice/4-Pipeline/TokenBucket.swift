/// The pacing rule of a rate limit: a token bucket that fills at ``bytesPerSecond`` and holds at
/// most one chunk's worth of tokens (the largest chunk seen so far); a chunk goes once the bucket
/// holds all of its bytes, and takes them.
///
/// Kept as the bucket's arrival-time equivalent (the generic cell rate algorithm of ITU-T I.371):
/// ``readyAt`` is the instant at which every byte let through so far is paid for, and a chunk of
/// `n` bytes may go once `readyAt + cost(n) - cost(largest chunk)` has come, where `cost(n)` is
/// `n / bytesPerSecond` seconds. A bucket that has been idle is full (one chunk goes at once), and
/// never fuller: the burst after a pause is one chunk. A chunk that had to wait is charged from
/// the instant it was due, not from the end of its sleep: a sleep that ends late (timer slack, a
/// busy thread; measured about 3 ms a wake-up here) is made up by the next chunk instead of
/// lost, so the rate holds over many chunks. All arithmetic is on `Duration`, exactly, so a
/// test clock sees the same waits on every run.
///
/// A value-type state machine: ``take(_:at:)`` is its one event and returns what to do. It
/// neither reads a clock nor sleeps; ``PacedChunks`` does both, through an injectable clock.
struct TokenBucket: Sendable, Hashable {
    /// What the caller does with the chunk it asked about.
    enum Action: Sendable, Hashable {
        /// Let the chunk through now; the bucket has taken its bytes.
        case pass
        /// Wait this long, then ask again (with the time then).
        case wait(Duration)
    }

    /// The rate the bucket fills at, in bytes per second (>= 1).
    let bytesPerSecond: Int64
    /// The instant every byte let through so far is paid for; `nil` before the first chunk.
    private(set) var readyAt: Duration?
    /// The time the largest chunk seen so far takes to pay for: the bucket's depth.
    private(set) var depth: Duration = .zero
    /// Whether the last answer was a wait: the next chunk is then the one that waited.
    private(set) var waited = false

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

    /// Asks whether a chunk of `bytes` bytes may go at `now`.
    ///
    /// - Parameters:
    ///   - bytes: the chunk's size (>= 0; an empty chunk always passes).
    ///   - now: the current time, as a duration since any fixed origin the caller keeps.
    /// - Returns: ``Action/pass`` (the bucket took the bytes) or ``Action/wait(_:)`` with the
    ///   time until it will hold them; after that wait, ask again.
    mutating func take(_ bytes: Int, at now: Duration) -> Action {
        let cost = cost(of: bytes)
        depth = max(depth, cost)
        let paid = readyAt ?? now
        let earliest = paid + cost - depth
        guard now >= earliest else {
            waited = true
            return .wait(earliest - now)
        }
        readyAt = (waited ? paid : max(paid, now)) + cost
        waited = false
        return .pass
    }
}
