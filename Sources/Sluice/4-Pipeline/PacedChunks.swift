/// A sequence of chunks held back to a rate: `pv -L`, `rsync --bwlimit` as a pipeline stage.
///
/// Each `next()` takes the base sequence's next chunk and returns it once a token bucket that
/// fills at ``bytesPerSecond`` holds the chunk's bytes; the bucket holds at most one chunk's
/// worth (the largest chunk so far), so after a pause one chunk goes at once and the rest keep
/// the rate. Over `n` chunks of `s` bytes the last one goes `(n - 1) × s / bytesPerSecond`
/// seconds after the first.
///
/// Placed after a ``BoundedChannel`` (as ``FileCopy`` does with
/// ``FileCopy/Options/rateLimit``), it slows the stage that fills the channel through the
/// channel's backpressure: the producer waits for room and memory stays at the channel's bound.
///
/// ```swift
/// let source = try await FileChunks.open("in.bin")
/// for try await chunk in PacedChunks(source, bytesPerSecond: 50 << 20) {  // 50 MiB/s
///     try await sink.write(chunk)
/// }
/// ```
///
/// Concurrency contract: as its base, single-pass with one consumer; `Sendable` when the base
/// is. Waiting is the clock's `sleep(for:)`, an asynchronous suspension that blocks no thread of
/// the cooperative pool or of any executor; cancelling the consuming task ends a wait with
/// `CancellationError`. The clock is injectable (a test clock that advances when slept on makes
/// tests deterministic, with no real sleep).
public struct PacedChunks<Base: AsyncSequence, C: Clock>: AsyncSequence where Base.Element == Chunk, C.Duration == Duration {
    /// Each element is the base sequence's next chunk, unchanged.
    public typealias Element = Chunk

    private let base: Base
    private let clock: C
    /// The rate, in bytes per second.
    public let bytesPerSecond: Int64

    /// Paces `base` at `bytesPerSecond` on `clock`.
    ///
    /// - Parameters:
    ///   - base: the chunks to pace.
    ///   - bytesPerSecond: the rate, in bytes per second (>= 1).
    ///   - clock: where time is read and waited on.
    /// - Precondition: `bytesPerSecond >= 1`.
    public init(_ base: Base, bytesPerSecond: Int64, clock: C) {
        precondition(bytesPerSecond >= 1, "a rate limit must be at least 1 byte per second")
        self.base = base
        self.bytesPerSecond = bytesPerSecond
        self.clock = clock
    }

    /// Makes the iterator; the pacing starts with its first `next()`.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), pacer: ChunkPacer(bytesPerSecond: bytesPerSecond, clock: clock))
    }

    /// Takes each chunk from the base iterator and holds it back until the bucket lets it go.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        var pacer: ChunkPacer

        /// The base's next chunk, once the rate allows it; `nil` at the end of the base (at once).
        ///
        /// - Throws: what the base throws; `CancellationError` when the task is cancelled while
        ///   it waits.
        public mutating func next() async throws -> Chunk? {
            guard let chunk = try await base.next() else { return nil }
            try await pacer.admit(chunk.count)
            return chunk
        }
    }
}

extension PacedChunks where C == ContinuousClock {
    /// Paces `base` at `bytesPerSecond` on the `ContinuousClock`.
    ///
    /// - Parameters:
    ///   - base: the chunks to pace.
    ///   - bytesPerSecond: the rate, in bytes per second (>= 1).
    /// - Precondition: `bytesPerSecond >= 1`.
    public init(_ base: Base, bytesPerSecond: Int64) {
        self.init(base, bytesPerSecond: bytesPerSecond, clock: ContinuousClock())
    }
}

extension PacedChunks: Sendable where Base: Sendable {}
