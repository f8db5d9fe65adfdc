/// The output of a ``FileCopy`` did not read back as it was written: the copy was aborted and
/// nothing was committed (``PipelineOptions/Verification``).
///
/// Its ``description`` is one line without a program prefix, naming the destination and, when
/// it was found, the offset of the first byte that differs:
/// `'out.bin' does not read back as written: first difference at offset 1048576 ...`.
///
/// Concurrency contract: a `Sendable` value; it may cross any concurrency domain.
public struct VerificationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What did not match.
    public enum Kind: Sendable, Hashable {
        /// The output read back (decoded for ``PipelineOptions/Verification/gzipOfSource``) has another
        /// CRC-32 or size than expected. `firstDifference` is the offset (from 0, in the
        /// uncompressed data) of the first byte that differs between the source (decoded for
        /// ``PipelineOptions/Verification/decodedSource``) and the output, or of the end of the shorter of
        /// them; `nil` when it could not be found, for the reason in `unlocatedReason`.
        case mismatch(firstDifference: Int64?, unlocatedReason: String?)
        /// The written gzip member does not decode (``PipelineOptions/Verification/gzipOfSource``).
        case undecodable(GzipError)
    }

    /// What did not match.
    public var kind: Kind
    /// The destination whose data was read back.
    public var destination: Pathname
    /// How the output was checked.
    public var verification: PipelineOptions.Verification
    /// The CRC-32 and size, in bytes, the copy computed while it ran.
    public var expectedCRC32: UInt32
    /// The uncompressed size in bytes the copy computed while it ran.
    public var expectedSize: Int64
    /// The CRC-32 of what was read back (decoded for a compression); `nil` when it could not be
    /// decoded.
    public var actualCRC32: UInt32?
    /// The size in bytes of what was read back (decoded for a compression); `nil` when it could
    /// not be decoded.
    public var actualSize: Int64?

    /// Creates an error from its parts.
    package init(
        _ kind: Kind, destination: Pathname, verification: PipelineOptions.Verification, expectedCRC32: UInt32,
        expectedSize: Int64, actualCRC32: UInt32?, actualSize: Int64?
    ) {
        self.kind = kind
        self.destination = destination
        self.verification = verification
        self.expectedCRC32 = expectedCRC32
        self.expectedSize = expectedSize
        self.actualCRC32 = actualCRC32
        self.actualSize = actualSize
    }

    /// The offset of the first byte that differs, when it was found (the kind's, for tests).
    package var firstDifference: Int64? {
        if case .mismatch(let offset, _) = kind { offset } else { nil }
    }

    /// One line: the destination, what differs and where, and that nothing was committed.
    public var description: String {
        switch kind {
        case .undecodable(let error):
            return "'\(destination)' does not decode as it was written: \(error); nothing committed"
        case .mismatch(let offset, let unlocated):
            let data = verification == .gzipOfSource ? "its decoded data" : "its data"
            var text = "'\(destination)' does not read back as it was written: "
            if let offset {
                let reference = verification == .decodedSource ? "the source's decoded data" : "the source"
                text += "\(data) first differs from \(reference) at offset \(offset)"
            } else {
                text += "\(data) differs from what was written"
            }
            text += " (read back: \(actualSize.map(String.init) ?? "?") bytes, CRC-32 \(actualCRC32.map { CRC32(value: $0).description } ?? "?"); "
            text += "written: \(expectedSize) bytes, CRC-32 \(CRC32(value: expectedCRC32)))"
            if offset == nil, let unlocated { text += "; the first difference was not located: \(unlocated)" }
            return text + "; nothing committed"
        }
    }
}
