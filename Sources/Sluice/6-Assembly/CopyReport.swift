/// What a finished copy did (a ``Pipeline``, or one file of a ``Copier``): bytes, checksum, the
/// method taken, time and flow-control figures.
public struct CopyReport: Sendable, Hashable {
    /// Bytes consumed from the source (compressed bytes for decompression).
    public var bytesRead: Int64
    /// Bytes handed to the sink (compressed bytes for compression).
    public var bytesWritten: Int64
    /// The CRC-32 (ISO 3309, RFC 1952 §8) of the uncompressed data: of the bytes copied, of the
    /// input of a compression, of the output of a decompression (the gzip trailer's CRC).
    /// `nil` when the copy was asked not to compute it (``PipelineOptions/computesCRC32``), and
    /// when the data did not pass through Sluice's memory: a ``CopyMethod/clone`` or a
    /// ``CopyMethod/kernelCopy`` (``method``), where computing it would mean reading the whole file
    /// again. A hole counts as its zeros.
    public var crc32: UInt32?
    /// Wall-clock time from the start of ``Pipeline/run()`` until the sink committed.
    public var duration: Duration
    /// The most bytes held in the pipeline's channels at any one time.
    public var peakBufferedBytes: Int64
    /// How long the reading stage waited, in all, for room in a full channel (backpressure):
    /// large when the sink is the slow part.
    public var producerSuspended: Duration
    /// Conditions that did not fail the copy (for example trailing bytes after the last gzip
    /// member); the CLI prints them and exits with status 2.
    public var warnings: [StageWarning]
    /// What the check of the output found, when one was asked for
    /// (``PipelineOptions/verifiesOutput``); `nil` otherwise.
    public var verification: CopyReport.VerificationOutcome?
    /// How the data was copied: ``CopyMethod/pipeline`` for every ``Pipeline``; what the table
    /// chose for a file of a ``Copier``.
    public var method: CopyMethod
    /// The methods tried before ``method`` that the kernel refused, in order, with why.
    package var refusals: [CopyMethod.Refusal]
    /// The source's status when it was opened, before its first byte was read (a file's), what
    /// `--rm` compares the source with before it removes it; `nil` for a source that is no file.
    package var sourceStatus: FileStatus?

    /// Creates a report.
    package init(
        bytesRead: Int64, bytesWritten: Int64, crc32: UInt32?, duration: Duration,
        peakBufferedBytes: Int64, producerSuspended: Duration, warnings: [StageWarning],
        verification: CopyReport.VerificationOutcome? = nil,
        method: CopyMethod = .pipeline, refusals: [CopyMethod.Refusal] = []
    ) {
        self.bytesRead = bytesRead
        self.bytesWritten = bytesWritten
        self.crc32 = crc32
        self.duration = duration
        self.peakBufferedBytes = peakBufferedBytes
        self.producerSuspended = producerSuspended
        self.warnings = warnings
        self.verification = verification
        self.method = method
        self.refusals = refusals
    }

    /// Records the source's status at its open, `opened`, and what changed in it while it was
    /// read, `change` (`FileStatus.changes(to:)`), if anything did: a warning
    /// (``StageWarning/sourceChanged(_:)``). The copy holds what was read.
    package mutating func note(sourceChange change: String?, opened: FileStatus) {
        sourceStatus = opened
        if let change { warnings.append(.sourceChanged(change)) }
    }

    /// Average throughput over ``duration``, in source bytes per second (0 for a zero duration).
    package var bytesPerSecond: Double {
        let seconds = duration.sluiceSeconds
        return seconds > 0 ? Double(bytesRead) / seconds : 0
    }
}

extension CopyReport {
    /// What a ``Pipeline`` asked to verify its output found, when the output could be checked or
    /// could not be.
    public enum VerificationOutcome: Sendable, Hashable {
        /// The output was read back and matched.
        case verified
        /// The output is a clone of the source (``CopyMethod/clone``): it shares the source's
        /// extents, so there is no written copy to read back; nothing was re-read.
        case sharedExtents
        /// The output could not be read back, for the reason given (for example a device or FIFO
        /// written in place); it was committed unverified.
        case notVerified(reason: String)
    }
}
