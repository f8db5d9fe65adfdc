#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Compares two streams of chunks byte by byte, whatever their chunk boundaries, holding one
/// chunk of each.
enum ChunkComparison {
    /// The offset of the first byte that differs between `first` and `second`, or of the end of
    /// the shorter one; `nil` when they hold the same bytes.
    ///
    /// - Throws: what either sequence throws.
    static func firstDifference<A: AsyncSequence, B: AsyncSequence>(_ first: A, _ second: B) async throws -> Int64?
    where A.Element == Chunk, B.Element == Chunk {
        var left = Cursor(first.makeAsyncIterator())
        var right = Cursor(second.makeAsyncIterator())
        var offset: Int64 = 0
        while true {
            let leftEnded = try await left.fill()
            let rightEnded = try await right.fill()
            if leftEnded || rightEnded { return leftEnded && rightEnded ? nil : offset }
            let count = min(left.remaining, right.remaining)
            let same = left.chunk.withUnsafeBytes { a in
                right.chunk.withUnsafeBytes { b in
                    Self.firstMismatch(a, from: left.position, b, from: right.position, count: count)
                }
            }
            if let same { return offset + Int64(same) }
            offset += Int64(count)
            left.position += count
            right.position += count
        }
    }

    /// The index (from 0) within `count` bytes at which `a[aStart...]` and `b[bStart...]` first
    /// differ, or `nil`. `memcmp` finds whether they differ; the byte is then looked for.
    private static func firstMismatch(
        _ a: UnsafeRawBufferPointer, from aStart: Int, _ b: UnsafeRawBufferPointer, from bStart: Int, count: Int
    ) -> Int? {
        let x = UnsafeRawBufferPointer(rebasing: a[aStart..<aStart + count])
        let y = UnsafeRawBufferPointer(rebasing: b[bStart..<bStart + count])
        guard count > 0, memcmp(x.baseAddress!, y.baseAddress!, count) != 0 else { return nil }
        return (0..<count).first { x[$0] != y[$0] }
    }

    /// One stream's current chunk and the position within it.
    private struct Cursor<Iterator: AsyncIteratorProtocol> where Iterator.Element == Chunk {
        var iterator: Iterator
        var chunk = Chunk([UInt8]())
        var position = 0
        var remaining: Int { chunk.count - position }

        init(_ iterator: Iterator) { self.iterator = iterator }

        /// Moves to the next non-empty chunk when this one is used up.
        ///
        /// - Returns: whether the stream has ended.
        mutating func fill() async throws -> Bool {
            while remaining == 0 {
                guard let next = try await iterator.next() else { return true }
                chunk = next
                position = 0
            }
            return false
        }
    }
}
