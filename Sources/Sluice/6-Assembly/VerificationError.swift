/// The output of a ``Pipeline`` did not read back as it was written: the copy was aborted and
/// nothing was committed (``PipelineOptions/verifiesOutput``).
///
/// Its ``description`` is one line without a program prefix, naming the destination and, when
/// it was found, the offset of the first byte that differs:
/// `'out.bin' does not read back as written: first difference at offset 1048576 ...`.
///
/// Concurrency contract: a `Sendable` value; it may cross any concurrency domain.
public struct VerificationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What did not match.
    public enum Kind: Sendable, Hashable {
        /// The output read back (decoded, for a transform that encodes) has another CRC-32 or
        /// size than expected. `firstDifference` is the offset (from 0, in the decoded data) of
        /// the first byte that differs between the source (decoded again, for a transform that
        /// decodes) and the output, or of the end of the shorter of them; `nil` when it could not
        /// be found, for the reason in `unlocatedReason`.
        case mismatch(firstDifference: Int64?, unlocatedReason: String?)
        /// The output does not decode: the decoder of a transform that encodes
        /// (``TransformVerification/encodesInput(decoder:)``) threw this error, the cause (for
        /// gzip a ``GzipError``).
        case undecodable(any Error)

        /// Whether two kinds are the same: their values, an underlying error by its own `==` when
        /// it is `Hashable` (``GzipError``), else by its description.
        public static func == (lhs: Kind, rhs: Kind) -> Bool { lhs.identity == rhs.identity }

        /// Hashes what ``==(_:_:)`` compares.
        public func hash(into hasher: inout Hasher) { hasher.combine(identity) }

        private var identity: AnyHashable {
            switch self {
            case .mismatch(let offset, let reason): AnyHashable([AnyHashable(offset), AnyHashable(reason)])
            case .undecodable(let cause): (cause as? any Hashable).map { AnyHashable($0) } ?? AnyHashable("\(cause)")
            }
        }
    }

    /// Which side of the comparison is decoded: neither (a copy), the output (read back through
    /// the decoder of a transform that encodes), or the source (decoded again, for a transform
    /// that decodes).
    package enum Decoded: Sendable, Hashable {
        case neither, output, source
    }

    /// What did not match.
    public var kind: Kind
    /// The destination whose data was read back.
    public var destination: Pathname
    /// Which side was decoded: the words of ``description``.
    package var decoded: Decoded
    /// The CRC-32 the copy computed while it ran (of the decoded data).
    public var expectedCRC32: UInt32
    /// The decoded size in bytes the copy computed while it ran.
    public var expectedSize: Int64
    /// The CRC-32 of what was read back (decoded, for a transform that encodes); `nil` when it
    /// could not be decoded.
    public var actualCRC32: UInt32?
    /// The size in bytes of what was read back (decoded, for a transform that encodes); `nil`
    /// when it could not be decoded.
    public var actualSize: Int64?

    /// Creates an error from its parts.
    package init(
        _ kind: Kind, destination: Pathname, decoded: Decoded, expectedCRC32: UInt32, expectedSize: Int64,
        actualCRC32: UInt32?, actualSize: Int64?
    ) {
        self.kind = kind
        self.destination = destination
        self.decoded = decoded
        self.expectedCRC32 = expectedCRC32
        self.expectedSize = expectedSize
        self.actualCRC32 = actualCRC32
        self.actualSize = actualSize
    }

    /// How the output was checked, in the gzip-only words of 0.2: the output decoded is
    /// ``PipelineOptions/Verification/gzipOfSource``, the source decoded
    /// ``PipelineOptions/Verification/decodedSource``.
    @available(*, deprecated, message: "the transform says how its output is checked (VerifiableTransform)")
    public var verification: PipelineOptions.Verification {
        get { decoded == .output ? .gzipOfSource : decoded == .source ? .decodedSource : .sameBytes }
        set { decoded = newValue == .gzipOfSource ? .output : newValue == .decodedSource ? .source : .neither }
    }

    /// The offset of the first byte that differs, when it was found (the kind's, for tests).
    package var firstDifference: Int64? {
        if case .mismatch(let offset, _) = kind { offset } else { nil }
    }

    /// One line: the destination, what differs and where, and that nothing was committed.
    public var description: String {
        switch kind {
        case .undecodable(let cause):
            return "'\(destination)' does not decode as it was written: \(cause); nothing committed"
        case .mismatch(let offset, let unlocated):
            let data = decoded == .output ? "its decoded data" : "its data"
            var text = "'\(destination)' does not read back as it was written: "
            if let offset {
                let reference = decoded == .source ? "the source's decoded data" : "the source"
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
