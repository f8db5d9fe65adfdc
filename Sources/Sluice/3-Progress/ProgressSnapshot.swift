/// A complete, self-contained reading of an operation's progress at one instant.
///
/// A snapshot is never a delta: each one replaces the one before it, which is why a
/// ``ProgressHub`` subscriber may skip stale snapshots and lose nothing (the data path, by
/// contrast, never drops a chunk).
///
/// Besides counters and rate, a snapshot carries flow-control telemetry (``bufferedBytes``,
/// ``peakBufferedBytes``, ``producerSuspended``) that says *why* an operation is slow: a producer
/// that spends most of its time suspended on backpressure is waiting for a slow sink, not a slow
/// source.
///
/// The snapshots a ``Pipeline`` or a ``Copier`` publishes
/// follow the rules documented on each property (clamping, monotonic fraction, the final
/// snapshot's truth).
///
/// ```swift
/// for await snapshot in hub.subscribe() {
///     if let fraction = snapshot.fraction {
///         print("\(Int(fraction * 100)) %, \(snapshot.bytesPerSecond) B/s")
///     }
/// }
/// ```
///
/// - Note: `Sendable` and `Hashable`; safe to hand to any task.
public struct ProgressSnapshot: Sendable, Hashable {
    /// Bytes consumed from the source so far.
    ///
    /// For decompression these are compressed bytes, so ``fraction`` follows the input file.
    /// Never decreases from one snapshot to the next of the same operation.
    public var bytesCompleted: Int64

    /// Bytes written to the sink so far (for compression: compressed bytes).
    public var bytesWritten: Int64

    /// The source's size in bytes when it is known, `nil` otherwise.
    ///
    /// `nil` for pipes, character devices and files whose reported size cannot be trusted, and
    /// also once the source has yielded more bytes than its announced size (a growing file), until
    /// the final snapshot. The final snapshot of a successful operation sets it to
    /// ``bytesCompleted``.
    public var totalBytes: Int64?

    /// ``bytesCompleted`` / ``totalBytes``, clamped to `0...1`; `nil` while the total is unknown
    /// or 0, and, over many files (a ``Copier``), while it is not final: while more files may
    /// come (a walk, or an engine given no totals before ``Copier/finish()``) or a file's size
    /// is not known yet (see ``Copier/init(options:totalBytes:totalFiles:isTotalGrowing:)``).
    ///
    /// Never NaN or infinite. A non-nil fraction never decreases from one snapshot to the next.
    /// The final snapshot of a successful operation has exactly `1.0` (a 0-byte source included).
    public var fraction: Double?

    /// Time since the operation started, measured on `ContinuousClock`.
    public var elapsed: Duration

    /// Average throughput since the start: ``bytesCompleted`` divided by ``elapsed`` in seconds.
    ///
    /// 0 when ``elapsed`` is 0; always finite and >= 0.
    public var bytesPerSecond: Double

    /// Bytes held between pipeline stages (in bounded channels) at the instant of the snapshot.
    public var bufferedBytes: Int64

    /// The largest ``bufferedBytes`` seen since the operation started.
    public var peakBufferedBytes: Int64

    /// Total time the producer has spent suspended on backpressure (waiting for room in a full
    /// channel) since the operation started.
    public var producerSuspended: Duration

    /// Whether this is the operation's last snapshot (success or failure).
    public var isFinal: Bool

    /// Source bytes of the files committed so far: in place at their destination, complete.
    ///
    /// Unlike ``bytesCompleted``, which counts what was read (and, over many files, a failed
    /// file's bytes too, so that it keeps to its total), this counts only what the operation
    /// delivered: for one file, 0 until the final snapshot of a success, then
    /// ``bytesCompleted``; over many files, the sum over those committed. An operation that was
    /// interrupted or failed says here what it left in place.
    public var bytesCommitted: Int64 = 0

    /// Files committed so far (for one file: 1 in the final snapshot of a success, else 0).
    /// Over many files, ``ProgressSnapshot/FileCounts/completed`` counts the failed ones too; this does not.
    public var filesCommitted: Int = 0

    /// For an operation over many files, its files done of the total and the file this snapshot
    /// is about; `nil` for one file. The byte counts are then the sums over all the files.
    public var files: ProgressSnapshot.FileCounts? = nil

    /// Creates a snapshot from its fields, as given.
    ///
    /// This initialiser enforces none of the rules documented on the properties: they hold for
    /// the snapshots Sluice's operations publish, not for one made here.
    ///
    /// - Parameters:
    ///   - bytesCompleted: bytes consumed from the source.
    ///   - bytesWritten: bytes written to the sink.
    ///   - totalBytes: the source's size in bytes, or `nil` when unknown.
    ///   - fraction: completion in `0...1`, or `nil` when unknown.
    ///   - elapsed: time since the start.
    ///   - bytesPerSecond: average throughput since the start, in bytes per second.
    ///   - bufferedBytes: bytes between stages now.
    ///   - peakBufferedBytes: the largest `bufferedBytes` so far.
    ///   - producerSuspended: total time the producer waited on backpressure.
    ///   - isFinal: whether this is the last snapshot.
    package init(
        bytesCompleted: Int64,
        bytesWritten: Int64,
        totalBytes: Int64?,
        fraction: Double?,
        elapsed: Duration,
        bytesPerSecond: Double,
        bufferedBytes: Int64,
        peakBufferedBytes: Int64,
        producerSuspended: Duration,
        isFinal: Bool
    ) {
        self.bytesCompleted = bytesCompleted
        self.bytesWritten = bytesWritten
        self.totalBytes = totalBytes
        self.fraction = fraction
        self.elapsed = elapsed
        self.bytesPerSecond = bytesPerSecond
        self.bufferedBytes = bufferedBytes
        self.peakBufferedBytes = peakBufferedBytes
        self.producerSuspended = producerSuspended
        self.isFinal = isFinal
    }
}

extension Duration {
    /// The duration in seconds as a `Double` (attosecond precision folded in).
    @usableFromInline
    package var sluiceSeconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }
}
