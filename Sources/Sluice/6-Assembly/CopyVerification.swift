extension PipelineOptions {
    /// How a ``FileCopy`` checks what it wrote before committing it (`--verify`), by what the
    /// written file holds.
    ///
    /// Each kind reads the written data back after the sink has made it durable and dropped it
    /// from the page cache (a ``FileSink`` does both), and compares it with a CRC-32 (ISO
    /// 3309, RFC 1952 §8) and a size that the copy computed while it ran, at the cost of one more
    /// read of the output. Only when they differ is the source read again, together with the
    /// output, to find the first byte that differs; memory stays at a few chunks whatever the size.
    /// A difference throws ``VerificationError``: the sink is aborted and nothing is committed.
    public enum Verification: Sendable, Hashable {
        /// The output holds the source's bytes (a copy): read back, its CRC-32 and size must be
        /// those of the bytes read from the source.
        case sameBytes
        /// The output is the gzip compression of the source (``ParallelGzipEncoder``): read
        /// back and decoded, it must have the CRC-32 and size of the input, so the check
        /// covers the encoder as well as the write.
        case gzipOfSource
        /// The source is gzip and the output its decoded data (``GzipDecoder``): read back, the
        /// output must have the CRC-32 the decoder computed while the data was written (which the
        /// decoder checked against each member's trailer) and the size written.
        case decodedSource
    }
}

extension CopyReport {
    /// What a ``FileCopy`` asked to verify its output found, when the output could be checked or
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

@available(*, unavailable, renamed: "PipelineOptions.Verification")
public typealias CopyVerification = PipelineOptions.Verification

@available(*, unavailable, renamed: "CopyReport.VerificationOutcome")
public typealias VerificationOutcome = CopyReport.VerificationOutcome
