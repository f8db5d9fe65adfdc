/// The error a gzip encoder or decoder throws: what went wrong and where in the compressed input.
///
/// Each ``Kind`` matches one of the failures `gzip -d` reports, and ``description`` uses the same
/// words (`not in gzip format`, `unexpected end of file`, …), followed by the byte offset.
/// Trailing bytes after the last member are not an error: the decoder reports them as a
/// ``StageWarning`` in its ``TransformSummary``.
///
/// Concurrency: a plain value; `Sendable`.
public struct GzipError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Hashable {
        /// The input does not start with the gzip magic bytes `1f 8b` (RFC 1952 §2.3.1): for
        /// example a zlib stream (RFC 1950), raw deflate (RFC 1951) or another format.
        case notGzip
        /// The member's compression method (CM, RFC 1952 §2.3.1) is not 8 (deflate).
        case unknownMethod(UInt8)
        /// The header's FHCRC field does not match the header (RFC 1952 §2.3.1).
        case headerCRCMismatch
        /// The compressed data is not valid deflate data (RFC 1951), or the header is malformed
        /// (for example reserved flag bits set); the error's description gives zlib's message.
        case corruptData
        /// The CRC-32 stored in a member's trailer (`expected`) differs from the CRC-32 of the
        /// data that decoded (`actual`), RFC 1952 §2.3.1.
        case crc32Mismatch(expected: UInt32, actual: UInt32)
        /// The ISIZE stored in a member's trailer (`expected`) differs from the decoded size
        /// modulo 2^32 (`actual`), RFC 1952 §2.3.1.
        case sizeMismatch(expected: UInt32, actual: UInt32)
        /// The input ended inside a member: in its header, its data or before its 8-byte
        /// trailer, or after bytes that begin a new member (`1f`, `1f 8b`, …). An empty input is
        /// reported this way too, as `gzip -d` does.
        case truncatedInput
        /// The decoded output would exceed the decoder's limit of `limit` bytes.
        case outputLimitExceeded(limit: Int64)
        /// zlib failed for a reason unrelated to the input, such as `Z_MEM_ERROR` (-4) or
        /// `Z_VERSION_ERROR` (-6); `code` is zlib's return code.
        case zlib(code: Int32)
    }

    /// What went wrong.
    public var kind: Kind

    /// The byte offset in the compressed input at which the failure was detected (0 for the
    /// first byte). For ``Kind/notGzip`` it is the start of the member whose magic bytes are
    /// wrong; for ``Kind/unknownMethod(_:)``, the method byte; for trailer mismatches, the start
    /// of the stored field; for
    /// ``Kind/truncatedInput``, the input's length. An encoder reports the count of
    /// uncompressed bytes it had consumed.
    public var offset: Int64

    /// zlib's own message (`strm->msg`) when zlib gave one, for example `invalid block type`.
    package var zlibMessage: String?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - kind: what went wrong.
    ///   - offset: the byte offset in the compressed input (see ``offset``).
    ///   - zlibMessage: zlib's message, if any.
    package init(_ kind: Kind, offset: Int64, zlibMessage: String? = nil) {
        self.kind = kind
        self.offset = offset
        self.zlibMessage = zlibMessage
    }

    /// A one-line message in `gzip`'s words with the offset, without a program prefix, for
    /// example `CRC-32 mismatch (expected 0x363a3020, got 0x2f9c1c41) at byte 34`.
    public var description: String {
        let what: String
        switch kind {
        case .notGzip:
            what = "not in gzip format"
        case .unknownMethod(let method):
            what = "unknown method \(method)"
        case .headerCRCMismatch:
            what = "header CRC mismatch"
        case .corruptData:
            what = "invalid compressed data (\(zlibMessage ?? "format violated"))"
        case .crc32Mismatch(let expected, let actual):
            what = "CRC-32 mismatch (expected 0x\(CRC32(value: expected)), got 0x\(CRC32(value: actual)))"
        case .sizeMismatch(let expected, let actual):
            what = "length mismatch (ISIZE \(expected), got \(actual))"
        case .truncatedInput:
            what = "unexpected end of file"
        case .outputLimitExceeded(let limit):
            what = "output limit of \(limit) bytes exceeded"
        case .zlib(let code):
            what = "zlib error \(code)" + (zlibMessage.map { " (\($0))" } ?? "")
        }
        if case .outputLimitExceeded = kind { return "\(what) (at input byte \(offset))" }
        return "\(what) at byte \(offset)"
    }
}
