import SluiceTestSupport
import Testing
@testable import Sluice

@Suite struct ProgressTrackerTests {
    let start = ContinuousClock.now

    func tracker(total: Int64?) -> ProgressTracker {
        ProgressTracker(totalBytes: total, clock: start)
    }

    func at(_ seconds: Int) -> ContinuousClock.Instant {
        start.advanced(by: .seconds(seconds))
    }

    @Test(arguments: [nil, 0] as [Int64?])
    func fractionIsNilForUnknownOrZeroTotal(total: Int64?) {
        var tracker = tracker(total: total)
        let empty = tracker.snapshot(bytesCompleted: 0, bytesWritten: 0, bufferedBytes: 0,
                                     peakBufferedBytes: 0, producerSuspended: .zero, now: at(1))
        #expect(empty.fraction == nil)
        #expect(empty.totalBytes == total)
        #expect(!empty.isFinal)
    }

    @Test func fractionFollowsCompletedOverTotal() {
        var tracker = tracker(total: 200)
        let snapshot = tracker.snapshot(bytesCompleted: 50, bytesWritten: 40, bufferedBytes: 10,
                                        peakBufferedBytes: 10, producerSuspended: .zero, now: at(1))
        #expect(snapshot.fraction == 0.25)
        #expect(snapshot.totalBytes == 200)
        #expect(snapshot.bytesWritten == 40)
    }

    @Test func fractionIsClampedAndNeverNaN() throws {
        var tracker = tracker(total: 100)
        for completed: Int64 in [-5, 0, 30, 100] {
            let snapshot = tracker.snapshot(bytesCompleted: completed, bytesWritten: 0, bufferedBytes: 0,
                                            peakBufferedBytes: 0, producerSuspended: .zero, now: at(1))
            let fraction = try #require(snapshot.fraction)
            #expect((0.0...1.0).contains(fraction))
            #expect(!fraction.isNaN)
        }
    }

    @Test func fractionAndCountersNeverDecrease() {
        var tracker = tracker(total: 100)
        let first = tracker.snapshot(bytesCompleted: 60, bytesWritten: 50, bufferedBytes: 10,
                                     peakBufferedBytes: 30, producerSuspended: .seconds(2), now: at(1))
        let second = tracker.snapshot(bytesCompleted: 20, bytesWritten: 10, bufferedBytes: 5,
                                      peakBufferedBytes: 5, producerSuspended: .seconds(1), now: at(2))
        #expect(first.fraction == 0.6)
        #expect(second.fraction == 0.6)
        #expect(second.bytesCompleted == 60)
        #expect(second.bytesWritten == 50)
        #expect(second.peakBufferedBytes == 30)
        #expect(second.bufferedBytes == 5)
        #expect(second.producerSuspended == .seconds(2))
    }

    @Test func peakIsAtLeastTheCurrentBuffer() {
        var tracker = tracker(total: nil)
        let snapshot = tracker.snapshot(bytesCompleted: 0, bytesWritten: 0, bufferedBytes: 70,
                                        peakBufferedBytes: 10, producerSuspended: .zero, now: at(1))
        #expect(snapshot.peakBufferedBytes == 70)
    }

    @Test func exceededTotalBecomesUnknownUntilFinal() {
        var tracker = tracker(total: 100)
        let before = tracker.snapshot(bytesCompleted: 100, bytesWritten: 100, bufferedBytes: 0,
                                      peakBufferedBytes: 0, producerSuspended: .zero, now: at(1))
        #expect(before.totalBytes == 100)
        #expect(before.fraction == 1.0)

        let grown = tracker.snapshot(bytesCompleted: 150, bytesWritten: 150, bufferedBytes: 0,
                                     peakBufferedBytes: 0, producerSuspended: .zero, now: at(2))
        #expect(grown.totalBytes == nil)
        #expect(grown.fraction == nil)
        #expect(tracker.totalExceeded)

        let later = tracker.snapshot(bytesCompleted: 150, bytesWritten: 150, bufferedBytes: 0,
                                     peakBufferedBytes: 0, producerSuspended: .zero, now: at(3))
        #expect(later.totalBytes == nil)

        let final = tracker.finalSnapshot(bytesCompleted: 180, bytesWritten: 180, bufferedBytes: 0,
                                          peakBufferedBytes: 0, producerSuspended: .zero, now: at(4))
        #expect(final.totalBytes == 180)
        #expect(final.fraction == 1.0)
        #expect(final.isFinal)
    }

    @Test(arguments: [(nil, 0), (0, 0), (100, 40), (10, 25), (nil, 12_345)] as [(Int64?, Int64)])
    func finalSnapshotTellsTheTruth(total: Int64?, completed: Int64) {
        var tracker = tracker(total: total)
        _ = tracker.snapshot(bytesCompleted: completed, bytesWritten: completed, bufferedBytes: 0,
                             peakBufferedBytes: 0, producerSuspended: .zero, now: at(1))
        let final = tracker.finalSnapshot(bytesCompleted: completed, bytesWritten: completed,
                                          bufferedBytes: 0, peakBufferedBytes: 0,
                                          producerSuspended: .zero, now: at(2))
        #expect(final.isFinal)
        #expect(final.totalBytes == completed)
        #expect(final.bytesCompleted == completed)
        #expect(final.fraction == 1.0)
    }

    @Test func failureSnapshotKeepsTheLastFractionAndUnknownTotal() {
        var known = tracker(total: 100)
        _ = known.snapshot(bytesCompleted: 40, bytesWritten: 0, bufferedBytes: 0,
                           peakBufferedBytes: 0, producerSuspended: .zero, now: at(1))
        let failed = known.failureSnapshot(bytesCompleted: 30, bytesWritten: 0, bufferedBytes: 0,
                                           peakBufferedBytes: 0, producerSuspended: .zero, now: at(2))
        #expect(failed.isFinal)
        #expect(failed.totalBytes == 100)
        #expect(failed.fraction == 0.4)

        var unknown = tracker(total: nil)
        let failedUnknown = unknown.failureSnapshot(bytesCompleted: 30, bytesWritten: 0, bufferedBytes: 0,
                                                    peakBufferedBytes: 0, producerSuspended: .zero, now: at(2))
        #expect(failedUnknown.isFinal)
        #expect(failedUnknown.totalBytes == nil)
        #expect(failedUnknown.fraction == nil)
    }

    @Test func bytesPerSecondIsZeroAtZeroElapsed() {
        var tracker = tracker(total: 10)
        let snapshot = tracker.snapshot(bytesCompleted: 10, bytesWritten: 10, bufferedBytes: 0,
                                        peakBufferedBytes: 0, producerSuspended: .zero, now: start)
        #expect(snapshot.elapsed == .zero)
        #expect(snapshot.bytesPerSecond == 0)
        #expect(snapshot.bytesPerSecond.isFinite)
    }

    @Test func instantBeforeStartCountsAsStart() {
        var tracker = tracker(total: 10)
        let snapshot = tracker.snapshot(bytesCompleted: 10, bytesWritten: 10, bufferedBytes: 0,
                                        peakBufferedBytes: 0, producerSuspended: .zero,
                                        now: start.advanced(by: .seconds(-3)))
        #expect(snapshot.elapsed == .zero)
        #expect(snapshot.bytesPerSecond == 0)
    }

    @Test func bytesPerSecondIsCompletedOverElapsed() {
        var tracker = tracker(total: nil)
        let snapshot = tracker.snapshot(bytesCompleted: 3_000, bytesWritten: 0, bufferedBytes: 0,
                                        peakBufferedBytes: 0, producerSuspended: .zero,
                                        now: start.advanced(by: .milliseconds(1_500)))
        #expect(snapshot.elapsed == .milliseconds(1_500))
        #expect(snapshot.bytesPerSecond == 2_000)
    }

    @Test func negativeTotalCountsAsUnknown() {
        var tracker = tracker(total: -1)
        let snapshot = tracker.snapshot(bytesCompleted: 5, bytesWritten: 0, bufferedBytes: 0,
                                        peakBufferedBytes: 0, producerSuspended: .zero, now: at(1))
        #expect(snapshot.totalBytes == nil)
        #expect(snapshot.fraction == nil)
    }

    @Test func fractionIsMonotonicOverAShrinkingAndGrowingSequence() {
        var tracker = tracker(total: 1_000)
        var previous: Double = 0
        var generator = SplitMix64(seed: 0x5EED)
        for step in 0..<500 {
            let completed = Int64(generator.next() % 1_000)
            let snapshot = tracker.snapshot(bytesCompleted: completed, bytesWritten: 0, bufferedBytes: 0,
                                            peakBufferedBytes: 0, producerSuspended: .zero, now: at(step))
            let fraction = snapshot.fraction ?? -1
            #expect(fraction >= previous, "seed 0x5EED, step \(step)")
            #expect((0.0...1.0).contains(fraction))
            previous = fraction
        }
    }
}
