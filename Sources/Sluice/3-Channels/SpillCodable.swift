/// An element a ``PushBuffer`` can write to its spill file and read back.
///
/// The spill file stores each element as a record: an 8-byte little-endian length, then the
/// bytes ``withEncodedBytes(_:)`` presents. Reading it back, the buffer calls
/// ``init(decodingByteCount:from:)`` with that length and a function that fills a buffer with the
/// bytes, so an element that owns a buffer (``Chunk``) is read straight into it, without a copy.
///
/// Concurrency contract: ``withEncodedBytes(_:)`` runs on the yielding thread, inside
/// ``PushBuffer/yield(_:)``, while the buffer's spill writer lock is held: it must not call back
/// into the same buffer. ``init(decodingByteCount:from:)`` runs on the buffer's blocking-I/O
/// thread.
public protocol SpillCodable: Sendable {
    /// Calls `body` once with the bytes that stand for `self` in a spill file.
    ///
    /// - Parameter body: writes the bytes; valid only during the call.
    /// - Throws: what `body` throws (a write error), or an encoding error.
    func withEncodedBytes(_ body: (UnsafeRawBufferPointer) throws -> Void) throws

    /// Recreates an element from `count` bytes of a spill file.
    ///
    /// - Parameters:
    ///   - count: the record's length in bytes (what ``withEncodedBytes(_:)`` presented).
    ///   - read: fills the buffer it is given (of exactly `count` bytes) with the record's bytes;
    ///     call it once.
    /// - Throws: what `read` throws (a read error), or a decoding error.
    init(decodingByteCount count: Int, from read: (UnsafeMutableRawBufferPointer) throws -> Void) throws
}

extension Chunk: SpillCodable {
    /// Presents the chunk's bytes as they are.
    public func withEncodedBytes(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        try withUnsafeBytes { (bytes) throws -> Void in try body(bytes) }
    }

    /// Reads `count` bytes straight into a new chunk's buffer.
    public init(decodingByteCount count: Int, from read: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
        try self.init(capacity: count) { (buffer) throws -> Int in
            try read(buffer)
            return count
        }
    }
}
