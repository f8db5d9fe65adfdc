/// An owned, immutable run of bytes: the unit that flows through a Sluice pipeline.
///
/// A chunk is a value (copy-on-write storage), so handing one to the next stage never
/// shares mutable memory. A stage may not keep a chunk after handing it on: the pipeline's
/// memory bound counts each chunk once, in the stage or channel that holds it.
///
/// - Note: `Chunk` is `Sendable` and may cross any concurrency domain.
public struct Chunk: Sendable, Hashable {
    /// The chunk's bytes, in order.
    public let bytes: [UInt8]

    /// Wraps `bytes` without copying them.
    ///
    /// - Parameter bytes: the chunk's contents; may be empty.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Creates a chunk of at most `capacity` bytes, filled by `initializer`.
    ///
    /// The initializer receives an uninitialised buffer of `capacity` bytes and returns how many
    /// bytes, from the start, it initialised (0...capacity). No byte is zero-filled first.
    ///
    /// - Parameters:
    ///   - capacity: the largest count of bytes the chunk may hold; must be >= 0.
    ///   - initializer: writes the bytes and returns their count.
    /// - Throws: whatever `initializer` throws; then no chunk is created.
    @inlinable
    public init<E: Error>(
        capacity: Int,
        initializingWith initializer: (UnsafeMutableRawBufferPointer) throws(E) -> Int
    ) throws(E) {
        var failure: E?
        let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            do throws(E) {
                count = try initializer(UnsafeMutableRawBufferPointer(buffer))
                precondition(count >= 0 && count <= capacity, "initializer returned a count out of 0...capacity")
            } catch {
                failure = error
                count = 0
            }
        }
        if let failure { throw failure }
        self.bytes = bytes
    }

    /// The number of bytes in the chunk.
    @inlinable
    public var count: Int { bytes.count }

    /// Whether the chunk holds no bytes.
    @inlinable
    public var isEmpty: Bool { bytes.isEmpty }

    /// Calls `body` with a read-only view of the chunk's bytes, valid only during the call.
    @inlinable
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        var result: Result<R, E>!
        bytes.withUnsafeBytes { buffer in
            do throws(E) { result = .success(try body(buffer)) } catch { result = .failure(error) }
        }
        return try result.get()
    }
}
