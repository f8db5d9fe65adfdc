/// Turns a pipeline's raw counters into ``ProgressSnapshot`` values that keep their promises.
///
/// The tracker owns every rule of a snapshot, so a pipeline only reports what it counted:
/// - ``ProgressSnapshot/fraction`` is `bytesCompleted / totalBytes` clamped to `0...1`, `nil`
///   while the total is unknown or 0, never NaN, and never lower than a fraction it returned
///   before.
/// - Counters never go backwards: a `bytesCompleted` (or `bytesWritten`, or
///   `peakBufferedBytes`) smaller than one seen before is raised to the previous maximum.
/// - Once the source yields more bytes than the announced total (a file that grows while it is
///   read), the total becomes unknown (`nil`) for every later snapshot except a successful final.
/// - ``finalSnapshot(bytesCompleted:bytesWritten:bufferedBytes:peakBufferedBytes:producerSuspended:now:)``
///   tells the truth at the end: `totalBytes = bytesCompleted`, `fraction = 1.0`, 0-byte sources
///   included.
/// - ``ProgressSnapshot/bytesPerSecond`` is 0 at zero elapsed time and always finite.
///
/// ```swift
/// var tracker = ProgressTracker(totalBytes: size, clock: ContinuousClock.now)
/// hub.publish(tracker.snapshot(bytesCompleted: read, bytesWritten: written,
///                              bufferedBytes: buffered, peakBufferedBytes: peak,
///                              producerSuspended: waited, now: .now))
/// ```
///
/// - Note: A value type with mutating methods; confine one tracker to one task (or guard it with
///   a lock), as with any `var`.
package struct ProgressTracker: Sendable {
    /// The announced size of the source, or `nil` when unknown.
    package let announcedTotalBytes: Int64?

    /// When the operation started, on `ContinuousClock`.
    package let start: ContinuousClock.Instant

    /// Whether the source has yielded more bytes than ``announcedTotalBytes``.
    package private(set) var totalExceeded = false

    private var maxBytesCompleted: Int64 = 0
    private var maxBytesWritten: Int64 = 0
    private var maxPeakBufferedBytes: Int64 = 0
    private var maxProducerSuspended: Duration = .zero
    private var lastFraction: Double?

    /// Creates a tracker for an operation that started at `start`.
    ///
    /// - Parameters:
    ///   - totalBytes: the source's size in bytes when known (for example `st_size` of a regular
    ///     file), or `nil` (pipes, devices, files that report 0). A negative size counts as
    ///     unknown.
    ///   - start: the instant the operation started; ``ProgressSnapshot/elapsed`` is measured
    ///     from it.
    package init(totalBytes: Int64?, clock start: ContinuousClock.Instant) {
        if let totalBytes, totalBytes >= 0 {
            self.announcedTotalBytes = totalBytes
        } else {
            self.announcedTotalBytes = nil
        }
        self.start = start
    }

    /// Makes an intermediate snapshot from the current counters.
    ///
    /// - Parameters:
    ///   - bytesCompleted: bytes consumed from the source so far (compressed bytes for
    ///     decompression); raised to the largest value seen before if smaller.
    ///   - bytesWritten: bytes written to the sink so far; raised likewise.
    ///   - bufferedBytes: bytes between stages now (negative values count as 0).
    ///   - peakBufferedBytes: the largest buffered byte count so far; raised to at least
    ///     `bufferedBytes` and the previous peak.
    ///   - producerSuspended: total time the producer has waited on backpressure; raised likewise.
    ///   - now: the instant of the snapshot; an instant before ``start`` counts as `start`.
    /// - Returns: a snapshot with `isFinal == false`.
    package mutating func snapshot(
        bytesCompleted: Int64,
        bytesWritten: Int64,
        bufferedBytes: Int64,
        peakBufferedBytes: Int64,
        producerSuspended: Duration,
        now: ContinuousClock.Instant
    ) -> ProgressSnapshot {
        var result = makeSnapshot(
            bytesCompleted: bytesCompleted, bytesWritten: bytesWritten, bufferedBytes: bufferedBytes,
            peakBufferedBytes: peakBufferedBytes, producerSuspended: producerSuspended, now: now
        )
        result.isFinal = false
        return result
    }

    /// Makes the last snapshot of a successful operation.
    ///
    /// Sets `totalBytes` to the (clamped) `bytesCompleted` and `fraction` to exactly `1.0`, also
    /// for a 0-byte source and for a source that outgrew its announced size; the one file is
    /// committed (``ProgressSnapshot/bytesCommitted`` is `bytesCompleted`,
    /// ``ProgressSnapshot/filesCommitted`` 1).
    ///
    /// - Parameters: as for
    ///   ``snapshot(bytesCompleted:bytesWritten:bufferedBytes:peakBufferedBytes:producerSuspended:now:)``.
    /// - Returns: a snapshot with `isFinal == true`.
    package mutating func finalSnapshot(
        bytesCompleted: Int64,
        bytesWritten: Int64,
        bufferedBytes: Int64,
        peakBufferedBytes: Int64,
        producerSuspended: Duration,
        now: ContinuousClock.Instant
    ) -> ProgressSnapshot {
        var result = makeSnapshot(
            bytesCompleted: bytesCompleted, bytesWritten: bytesWritten, bufferedBytes: bufferedBytes,
            peakBufferedBytes: peakBufferedBytes, producerSuspended: producerSuspended, now: now
        )
        result.totalBytes = result.bytesCompleted
        result.fraction = 1.0
        result.bytesCommitted = result.bytesCompleted
        result.filesCommitted = 1
        lastFraction = 1.0
        result.isFinal = true
        return result
    }

    /// Makes the last snapshot of an operation that failed or was cancelled.
    ///
    /// Follows the rules of an intermediate snapshot (the total stays unknown if it was exceeded,
    /// the fraction never decreases and is not forced to 1), and marks the snapshot final;
    /// nothing is committed.
    ///
    /// - Parameters: as for
    ///   ``snapshot(bytesCompleted:bytesWritten:bufferedBytes:peakBufferedBytes:producerSuspended:now:)``.
    /// - Returns: a snapshot with `isFinal == true`.
    package mutating func failureSnapshot(
        bytesCompleted: Int64,
        bytesWritten: Int64,
        bufferedBytes: Int64,
        peakBufferedBytes: Int64,
        producerSuspended: Duration,
        now: ContinuousClock.Instant
    ) -> ProgressSnapshot {
        var result = makeSnapshot(
            bytesCompleted: bytesCompleted, bytesWritten: bytesWritten, bufferedBytes: bufferedBytes,
            peakBufferedBytes: peakBufferedBytes, producerSuspended: producerSuspended, now: now
        )
        result.isFinal = true
        return result
    }

    /// Applies the shared rules; `isFinal` is left for the caller to set.
    private mutating func makeSnapshot(
        bytesCompleted: Int64,
        bytesWritten: Int64,
        bufferedBytes: Int64,
        peakBufferedBytes: Int64,
        producerSuspended: Duration,
        now: ContinuousClock.Instant
    ) -> ProgressSnapshot {
        maxBytesCompleted = max(maxBytesCompleted, bytesCompleted)
        maxBytesWritten = max(maxBytesWritten, bytesWritten)
        let buffered = max(0, bufferedBytes)
        maxPeakBufferedBytes = max(maxPeakBufferedBytes, peakBufferedBytes, buffered)
        maxProducerSuspended = max(maxProducerSuspended, producerSuspended)

        let completed = maxBytesCompleted
        var total: Int64?
        if let announced = announcedTotalBytes, !totalExceeded {
            if completed > announced {
                totalExceeded = true
            } else {
                total = announced
            }
        }

        var fraction: Double?
        if let total, total > 0 {
            let raw = Double(completed) / Double(total)
            let clamped = raw.isFinite ? min(1, max(0, raw)) : 0
            let monotonic = max(lastFraction ?? 0, clamped)
            lastFraction = monotonic
            fraction = monotonic
        }

        let elapsed = now > start ? start.duration(to: now) : .zero
        let seconds = elapsed.sluiceSeconds
        var rate = seconds > 0 ? Double(completed) / seconds : 0
        if !rate.isFinite || rate < 0 { rate = 0 }

        return ProgressSnapshot(
            bytesCompleted: completed,
            bytesWritten: maxBytesWritten,
            totalBytes: total,
            fraction: fraction,
            elapsed: elapsed,
            bytesPerSecond: rate,
            bufferedBytes: buffered,
            peakBufferedBytes: maxPeakBufferedBytes,
            producerSuspended: maxProducerSuspended,
            isFinal: false
        )
    }
}
