/// An element could not be turned into a spill record, or a spilled record back into an element.
///
/// Thrown by the consumer's `next()` of a ``PushBuffer`` with a spill policy, after the elements
/// accepted before: when ``SpillCodable/withEncodedBytes(_:)`` failed for a yield past capacity
/// (that yield was rejected, its element handed back), or when
/// ``SpillCodable/init(decodingByteCount:from:)`` failed during read-back (the records left in
/// the store were discarded). The codec's own error is ``cause``. Errors of the spill store
/// itself (a ``FileError`` of the spill file) are never wrapped in this one: they reach the
/// consumer as they are.
public struct SpillCodingError: Error, CustomStringConvertible {
    /// Which way the conversion failed.
    public enum Direction: Sendable, Hashable {
        /// An element into its record's bytes.
        case encoding
        /// A record's bytes into an element.
        case decoding
    }

    /// Which way the conversion failed.
    public var direction: Direction
    /// What the element type's codec threw.
    public var cause: any Error

    /// Creates the error.
    ///
    /// - Parameters:
    ///   - direction: which way the conversion failed.
    ///   - cause: what the codec threw.
    package init(_ direction: Direction, cause: any Error) {
        self.direction = direction
        self.cause = cause
    }

    /// `cannot encode an element for the spill store: <cause>`, or `cannot decode ...`.
    public var description: String {
        switch direction {
        case .encoding: "cannot encode an element for the spill store: \(cause)"
        case .decoding: "cannot decode an element from the spill store: \(cause)"
        }
    }
}
