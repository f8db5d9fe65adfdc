import Sluice
import Synchronization

/// A sink of one's own: it keeps the CRC-32 and the count of the bytes it receives, and stores
/// nothing. Any `ChunkSink` can end a pipeline.
final class ReadBack: ChunkSink {
    private let state = Mutex((crc: CRC32(), bytes: Int64(0)))

    func write(_ chunk: Chunk) async throws {
        state.withLock { state in
            chunk.withUnsafeBytes { state.crc.update($0) }
            state.bytes += Int64(chunk.count)
        }
    }

    func commit() async throws {}
    func abort() async {}

    /// The CRC-32 and the count of the bytes written so far.
    var value: (crc: CRC32, bytes: Int64) { state.withLock { $0 } }
}

/// Decompresses the gzip file at `path` into a ``ReadBack``: the decoder runs on a thread the
/// pipeline gives it, and checks the trailer's CRC-32 and ISIZE (RFC 1952) at the end.
func readBack(_ path: Pathname) async throws -> (crc: CRC32, bytes: Int64) {
    let sink = ReadBack()
    let pipeline = Pipeline(from: try await FileChunks.open(path), to: sink, totalBytes: nil, transform: { GzipDecoder() })
    _ = try await pipeline.run()
    return sink.value
}
