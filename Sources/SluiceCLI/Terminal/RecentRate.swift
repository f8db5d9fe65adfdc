import Sluice

/// The rate of the last few seconds of an operation, for a progress bar and its ETA.
///
/// A snapshot's ``ProgressSnapshot/bytesPerSecond`` is the average since the start (the
/// documented JSON field): after a stall it stays low for as long again, and the ETA with it. The
/// bar shows this rate instead: bytes completed over the last `window` of the snapshots' own
/// elapsed times (at least the snapshot just before the window). The hub publishes nothing while
/// no byte moves, so during a stall the display records the newest snapshot again, aged to now,
/// and the rate falls to 0. Until half a second has passed, the average is all there is.
struct RecentRate {
    /// How far back the rate looks.
    let window: Duration
    private var samples: [(elapsed: Duration, bytes: Int64)] = []

    init(window: Duration = .seconds(5)) {
        self.window = window
    }

    /// Records `snapshot` and returns the recent rate in bytes per second (always finite, >= 0).
    /// A snapshot may be older than a stalled one drawn aged to now: time never goes back here.
    mutating func record(_ snapshot: ProgressSnapshot) -> Double {
        var snapshot = snapshot
        snapshot.elapsed = max(snapshot.elapsed, samples.last?.elapsed ?? .zero)
        samples.append((snapshot.elapsed, snapshot.bytesCompleted))
        // Keep one sample at or before the start of the window: the rate spans the whole window.
        while samples.count > 2, snapshot.elapsed - samples[1].elapsed >= window {
            samples.removeFirst()
        }
        let oldest = samples[0]
        let span = snapshot.elapsed - oldest.elapsed
        guard span >= .milliseconds(500) else { return snapshot.bytesPerSecond }
        let rate = Double(snapshot.bytesCompleted - oldest.bytes) / span.inSeconds
        return rate.isFinite ? max(0, rate) : 0
    }
}

extension Duration {
    /// The duration in seconds, attoseconds folded in.
    var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
