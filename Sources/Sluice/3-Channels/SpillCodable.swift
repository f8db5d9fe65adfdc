/// An element a ``PushBuffer`` can write to its spill store and read back.
///
/// The store keeps each element as a record: the bytes ``withEncodedBytes(_:)`` presents, with
/// the element's weight (a spill file writes an 8-byte little-endian length and the weight in
/// front of them). Reading it back, the buffer calls ``init(decodingByteCount:from:)`` with the
/// record's length and a function that fills a buffer with its bytes, so an element that owns a
/// buffer (``Chunk``) is read straight into it, without a copy.
///
/// Errors: what either method throws of its own (not an error of the store passed through
/// `body` or `read`) reaches the consumer as a ``SpillCodingError`` whose cause it is.
///
/// Concurrency contract: ``withEncodedBytes(_:)`` runs on the yielding thread, inside
/// ``PushBuffer/yield(_:)``, while the buffer's spill writer lock is held: it must not call back
/// into the same buffer. ``init(decodingByteCount:from:)`` runs on the buffer's blocking-I/O
/// thread.
public protocol SpillCodable: Sendable {
    /// Calls `body` once with the bytes that stand for `self` in a spill store.
    ///
    /// - Parameter body: writes the bytes; valid only during the call.
    /// - Throws: what `body` throws (the store's error, or the spill limit reached), or an
    ///   encoding error of its own.
    func withEncodedBytes(_ body: (UnsafeRawBufferPointer) throws -> Void) throws

    /// Recreates an element from a record of `count` bytes of a spill store.
    ///
    /// - Parameters:
    ///   - count: the record's length in bytes (what ``withEncodedBytes(_:)`` presented).
    ///   - read: fills the buffer it is given (of exactly `count` bytes) with the record's bytes;
    ///     call it once.
    /// - Throws: what `read` throws (the store's error), or a decoding error of its own.
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
