import Synchronization

/// Counts a pipeline's bytes and turns them into ``ProgressSnapshot``s for its ``ProgressHub``.
///
/// The reading stage adds to ``bytesCompleted`` (an atomic: no lock on the data path); only the
/// writing stage, and after it ``Pipeline/run()``, publish, so snapshots reach the hub in the
/// order they were made and a subscriber never sees a value older than one it saw.
final class ProgressRecorder: Sendable {
    let hub: ProgressHub
    let bytesCompleted = Atomic<Int64>(0)
    let bytesWritten = Atomic<Int64>(0)
    private let tracker: LockedValue<ProgressTracker>
    private let statistics: @Sendable () -> (buffered: Int64, peak: Int64, suspended: Duration)

    init(
        hub: ProgressHub, totalBytes: Int64?, start: ContinuousClock.Instant,
        statistics: @escaping @Sendable () -> (buffered: Int64, peak: Int64, suspended: Duration)
    ) {
        self.hub = hub
        self.tracker = LockedValue(ProgressTracker(totalBytes: totalBytes, clock: start))
        self.statistics = statistics
    }

    /// Called by the reading stage for each chunk taken from the source.
    func recordRead(_ count: Int) {
        bytesCompleted.wrappingAdd(Int64(count), ordering: .relaxed)
    }

    /// Called by the writing stage after each chunk written; publishes a snapshot.
    func recordWritten(_ count: Int) {
        let bytesWritten = self.bytesWritten.wrappingAdd(Int64(count), ordering: .relaxed).newValue
        let flow = statistics()
        let completed = bytesCompleted.load(ordering: .relaxed)
        let snapshot = tracker.withLock {
            $0.snapshot(
                bytesCompleted: completed, bytesWritten: bytesWritten, bufferedBytes: flow.buffered,
                peakBufferedBytes: flow.peak, producerSuspended: flow.suspended, now: .now)
        }
        hub.publish(snapshot)
    }

    /// Publishes the last snapshot (success: fraction 1.0; failure: as it stood) and ends every
    /// subscriber's stream.
    func finish(succeeded: Bool) {
        let bytesWritten = self.bytesWritten.load(ordering: .relaxed)
        let flow = statistics()
        let completed = bytesCompleted.load(ordering: .relaxed)
        let snapshot = tracker.withLock {
            succeeded
                ? $0.finalSnapshot(
                    bytesCompleted: completed, bytesWritten: bytesWritten, bufferedBytes: 0,
                    peakBufferedBytes: flow.peak, producerSuspended: flow.suspended, now: .now)
                : $0.failureSnapshot(
                    bytesCompleted: completed, bytesWritten: bytesWritten, bufferedBytes: flow.buffered,
                    peakBufferedBytes: flow.peak, producerSuspended: flow.suspended, now: .now)
        }
        hub.finish(with: snapshot)
    }
}
