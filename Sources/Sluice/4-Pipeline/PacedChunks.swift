/// A sequence of chunks held back to a rate: `pv -L`, `rsync --bwlimit` as a pipeline stage.
///
/// Each `next()` takes the base sequence's next chunk and returns it once its ``RateLimiter``
/// admits the chunk's bytes: a token bucket one chunk deep (the largest chunk so far), so after a
/// pause one chunk goes at once and the rest keep the rate. Over `n` chunks of `s` bytes the last
/// one goes `(n - 1) × s / bytesPerSecond` seconds after the first. Several sequences given one
/// limiter share its rate.
///
/// Placed after a ``BoundedChannel``, it slows the stage that fills the channel through the
/// channel's backpressure: the producer waits for room and memory stays at the channel's bound.
/// ``Pipeline`` does not use it: with ``PipelineOptions/rateLimit`` it paces the stage after its
/// first channel itself, which asks the limiter before it takes each chunk on.
///
/// ```swift
/// let source = try await FileChunks.open("in.bin")
/// for try await chunk in PacedChunks(source, bytesPerSecond: 50 << 20) {  // 50 MiB/s
///     try await sink.write(chunk)
/// }
/// ```
///
/// Concurrency contract: as its base, single-pass with one consumer; `Sendable` when the base
/// is. Waiting is the limiter's clock's `sleep(until:tolerance:)`, an asynchronous suspension that blocks no thread of
/// the cooperative pool or of any executor; cancelling the consuming task ends a wait with
/// `CancellationError`. The limiter's clock is injectable (a test clock that advances when slept
/// on makes tests deterministic, with no real sleep).
package struct PacedChunks<Base: AsyncSequence>: AsyncSequence where Base.Element == Chunk {
    /// Each element is the base sequence's next chunk, unchanged.
    package typealias Element = Chunk

    private let base: Base
    /// The rate the chunks are held to, shared with whatever else it is given to.
    package let limiter: RateLimiter

    /// Paces `base` by `limiter`.
    ///
    /// - Parameters:
    ///   - base: the chunks to pace.
    ///   - limiter: the rate; one limiter given to several sequences holds them all to it.
    package init(_ base: Base, limiter: RateLimiter) {
        self.base = base
        self.limiter = limiter
    }

    /// Paces `base` at `bytesPerSecond` on the `ContinuousClock`, with a limiter of its own.
    ///
    /// - Parameters:
    ///   - base: the chunks to pace.
    ///   - bytesPerSecond: the rate, in bytes per second (>= 1).
    /// - Precondition: `bytesPerSecond >= 1`.
    package init(_ base: Base, bytesPerSecond: Int64) {
        self.init(base, limiter: RateLimiter(bytesPerSecond: bytesPerSecond))
    }

    /// The rate, in bytes per second.
    package var bytesPerSecond: Int64 { limiter.bytesPerSecond }

    /// Makes the iterator; the pacing starts with its first `next()`.
    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), limiter: limiter)
    }

    /// Takes each chunk from the base iterator and holds it back until the limiter lets it go.
    package struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let limiter: RateLimiter

        /// The base's next chunk, once the rate allows it; `nil` at the end of the base (at once).
        ///
        /// - Throws: what the base throws; `CancellationError` when the task is cancelled while
        ///   it waits.
        package mutating func next() async throws -> Chunk? {
            guard let chunk = try await base.next() else { return nil }
            try await limiter.admit(chunk.count)
            return chunk
        }
    }
}

extension PacedChunks: Sendable where Base: Sendable {}
