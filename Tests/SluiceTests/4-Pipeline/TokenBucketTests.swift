import SluiceTestSupport
import Testing
@testable import Sluice

/// The pacing rule: a bucket of one chunk's worth, filled at the rate, kept as a schedule of
/// reservations (each answer is the instant the chunk goes).
@Suite struct TokenBucketTests {
    let second = Duration.seconds(1)

    @Test func theFirstChunkGoesAtOnceAndEachNextAfterItsCost() {
        var bucket = TokenBucket(bytesPerSecond: 1024)
        #expect(bucket.reserve(1024, at: .zero) == .zero)
        #expect(bucket.reserve(1024, at: .zero) == second)
        #expect(bucket.reserve(1024, at: second + .milliseconds(250)) == second * 2)
        #expect(bucket.reserve(1024, at: second * 2) == second * 3)
    }

    /// After a pause the bucket is full: one chunk goes at once, not the pause's worth.
    @Test func aPauseBanksOneChunkOnly() {
        var bucket = TokenBucket(bytesPerSecond: 1024)
        #expect(bucket.reserve(1024, at: .zero) == .zero)
        #expect(bucket.reserve(1024, at: second * 10) == second * 10)
        #expect(bucket.reserve(1024, at: second * 10) == second * 11)
    }

    /// A chunk is paid for by its own size: half a chunk waits half as long; an empty one not
    /// at all.
    @Test func smallerChunksCostLess() {
        var bucket = TokenBucket(bytesPerSecond: 1024)
        #expect(bucket.reserve(512, at: .zero) == .zero)
        #expect(bucket.reserve(512, at: .zero) == .milliseconds(500))
        #expect(bucket.reserve(0, at: .milliseconds(500)) == .milliseconds(500))
    }

    /// The bucket is as deep as the largest chunk: after a pause, it holds two chunks of half
    /// that size, and a third waits.
    @Test func depthIsTheLargestChunk() {
        var bucket = TokenBucket(bytesPerSecond: 1024)
        #expect(bucket.reserve(2048, at: .zero) == .zero)
        #expect(bucket.reserve(1024, at: .zero) == second)
        #expect(bucket.reserve(1024, at: second * 10) == second * 10)
        #expect(bucket.reserve(1024, at: second * 10) == second * 10)
        #expect(bucket.reserve(1024, at: second * 10) == second * 11)
    }

    /// Callers that ask at the same instant (files sharing one limiter) are scheduled one after
    /// the other, in the order they asked: together they keep the rate.
    @Test func concurrentRequestsQueueInTheOrderTheyAsked() {
        var bucket = TokenBucket(bytesPerSecond: 1024)
        let answers = (0..<4).map { _ in bucket.reserve(1024, at: .zero) }
        #expect(answers == [.zero, second, second * 2, second * 3])
    }

    /// The schedule does not depend on when a sleep ends: a chunk asked for 3 ms late (its
    /// caller woke late) still goes when its turn comes, so the lateness is made up.
    @Test func aLateWakeUpIsMadeUpByTheNextChunk() {
        var bucket = TokenBucket(bytesPerSecond: 1024)
        #expect(bucket.reserve(1024, at: .zero) == .zero)
        #expect(bucket.reserve(1024, at: .zero) == second)
        #expect(bucket.reserve(1024, at: second + .milliseconds(3)) == second * 2)
        #expect(bucket.reserve(1024, at: second * 10) == second * 10)
        #expect(bucket.reserve(1024, at: second * 10) == second * 11)
    }

    /// `n` chunks of `s` bytes: the last goes `(n - 1) × s / rate` after the first.
    @Test func aRunTakesItsSizeOverTheRateLessOneChunk() {
        var bucket = TokenBucket(bytesPerSecond: 50 << 20)
        var now = Duration.zero
        for _ in 0..<200 { now = bucket.reserve(1 << 20, at: now) }
        #expect(now == .milliseconds(3980))
    }
}
