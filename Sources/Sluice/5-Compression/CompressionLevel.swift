/// A deflate compression level, from 1 (fastest) to 9 (smallest output).
///
/// The level trades speed for size exactly as `gzip -1` … `gzip -9` do; it never changes the
/// format, so every level decodes with every gzip decoder (RFC 1952 §2.3.1, XFL only records it).
///
/// ```swift
/// let level = try CompressionLevel(6)       // same as .default
/// let encoder = ParallelGzipEncoder(level: .best)
/// ```
///
/// Concurrency: a plain value; `Sendable`.
public struct CompressionLevel: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The level, in 1...9.
    public let value: Int

    /// Creates a level from an integer in 1...9, or returns `nil` for any other integer.
    ///
    /// zlib's level 0 (stored, no compression) and -1 (its default) are deliberately not
    /// accepted: use ``default`` for 6.
    ///
    /// - Parameter value: the level, 1...9.
    package init?(exactly value: Int) {
        guard (1...9).contains(value) else { return nil }
        self.value = value
    }

    /// Creates a level from an integer in 1...9.
    ///
    /// - Parameter value: the level, 1...9.
    /// - Throws: ``InvalidLevelError`` when `value` is outside 1...9.
    public init(_ value: Int) throws(InvalidLevelError) {
        guard let level = CompressionLevel(exactly: value) else { throw InvalidLevelError(value: value) }
        self = level
    }

    /// Level 6, gzip's and zlib's default balance of speed and size.
    public static let `default` = CompressionLevel(exactly: 6)!

    /// Level 1, the fastest (`gzip -1`).
    public static let fastest = CompressionLevel(exactly: 1)!

    /// Level 9, the smallest output (`gzip -9`).
    public static let best = CompressionLevel(exactly: 9)!

    /// Orders levels from fastest to best compression.
    public static func < (lhs: CompressionLevel, rhs: CompressionLevel) -> Bool {
        lhs.value < rhs.value
    }

    /// The level as a number, for example `6`.
    public var description: String { String(value) }

    /// The error thrown when a compression level is outside 1...9.
    public struct InvalidLevelError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The rejected value.
        public let value: Int

        /// Says which value was rejected and what the valid range is.
        public var description: String { "invalid compression level \(value) (expected 1...9)" }
    }
}
