import Testing
@testable import Sluice

/// The pacing rule: a bucket of one chunk's worth, filled at the rate.
@Suite struct TokenBucketTests {
    let second = Duration.seconds(1)

    @Test func theFirstChunkGoesAtOnceAndEachNextAfterItsCost() {
        var bucket = TokenBucket(bytesPerSecond: 1024)
        #expect(bucket.take(1024, at: .zero) == .pass)
        #expect(bucket.take(1024, at: .zero) == .wait(second))
        #expect(bucket.take(1024, at: second) == .pass)
        #expect(bucket.take(1024, at: second + .milliseconds(250)) == .wait(.milliseconds(750)))
        #expect(bucket.take(1024, at: second * 2) == .pass)
    }

    /// After a pause the bucket is full: one chunk goes at once, not the pause's worth.
    @Test func aPauseBanksOneChunkOnly() {
        var bucket = TokenBucket(bytesPerSecond: 1024)
        #expect(bucket.take(1024, at: .zero) == .pass)
        #expect(bucket.take(1024, at: second * 10) == .pass)
        #expect(bucket.take(1024, at: second * 10) == .wait(second))
    }

    /// A chunk is paid for by its own size: half a chunk waits half as long.
    @Test func smallerChunksCostLess() {
        var bucket = TokenBucket(bytesPerSecond: 1024)
        #expect(bucket.take(512, at: .zero) == .pass)
        #expect(bucket.take(512, at: .zero) == .wait(.milliseconds(500)))
        #expect(bucket.take(512, at: .milliseconds(500)) == .pass)
        #expect(bucket.take(0, at: .milliseconds(500)) == .pass)
    }

    /// The bucket is as deep as the largest chunk: after a pause, it holds two chunks of half
    /// that size, and a third waits.
    @Test func depthIsTheLargestChunk() {
        var bucket = TokenBucket(bytesPerSecond: 1024)
        #expect(bucket.take(2048, at: .zero) == .pass)
        #expect(bucket.take(1024, at: .zero) == .wait(second))
        #expect(bucket.take(1024, at: second) == .pass)
        #expect(bucket.take(1024, at: second * 10) == .pass)
        #expect(bucket.take(1024, at: second * 10) == .pass)
        #expect(bucket.take(1024, at: second * 10) == .wait(second))
    }

    /// A sleep that ends late does not slow the rate: the chunk that waited is charged from
    /// when it was due, and the next one waits that much less. A pause that was not a wait
    /// still banks one chunk only.
    @Test func aLateWakeUpIsMadeUpByTheNextChunk() {
        var bucket = TokenBucket(bytesPerSecond: 1024)
        #expect(bucket.take(1024, at: .zero) == .pass)
        #expect(bucket.take(1024, at: .zero) == .wait(second))
        #expect(bucket.take(1024, at: second + .milliseconds(3)) == .pass)
        #expect(bucket.take(1024, at: second + .milliseconds(3)) == .wait(.milliseconds(997)))
        #expect(bucket.take(1024, at: second * 2) == .pass)
        #expect(bucket.take(1024, at: second * 10) == .pass)
        #expect(bucket.take(1024, at: second * 10) == .wait(second))
    }

    /// `n` chunks of `s` bytes: the last goes `(n - 1) × s / rate` after the first.
    @Test func aRunTakesItsSizeOverTheRateLessOneChunk() {
        var bucket = TokenBucket(bytesPerSecond: 50 << 20)
        var now = Duration.zero
        for _ in 0..<200 {
            while case .wait(let duration) = bucket.take(1 << 20, at: now) { now += duration }
        }
        #expect(now == .milliseconds(3980))
    }
}
