@testable import Sluice

/// Chunks held in memory, as an asynchronous sequence: a source with no file behind it.
struct ChunkList: AsyncSequence, Sendable {
    typealias Element = Chunk
    let chunks: [Chunk]

    init(_ chunks: [Chunk]) { self.chunks = chunks }

    func makeAsyncIterator() -> Iterator { Iterator(chunks: chunks) }

    struct Iterator: AsyncIteratorProtocol {
        let chunks: [Chunk]
        var index = 0

        mutating func next() async -> Chunk? {
            guard index < chunks.count else { return nil }
            defer { index += 1 }
            return chunks[index]
        }
    }
}
