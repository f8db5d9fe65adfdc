import Foundation
import Sluice
import Synchronization

/// A source that cannot pause: a thread that pushes `size` bytes of web-log-like lines in
/// chunks of `chunkSize` bytes, ignoring "pause", until it is done or stopped.
final class LineProducer: Sendable {
    private let size: Int64
    private let chunkSize: Int
    private let isStopped = Atomic(false)
    private let state = Mutex((crc: CRC32(), bytes: Int64(0)))

    init(size: Int64, chunkSize: Int) {
        self.size = size
        self.chunkSize = chunkSize
    }

    /// What the buffer accepted: its CRC-32 and its count of bytes.
    var summary: (crc: CRC32, bytes: Int64) { state.withLock { $0 } }

    /// Starts the thread; it calls `complete` once, at the end.
    func start(
        deliver: @escaping @Sendable (Chunk) -> PushBuffer<Chunk>.YieldResult,
        complete: @escaping @Sendable ((any Error)?) -> Void
    ) {
        let thread = Thread { [self] in
            var offset: Int64 = 0
            var line = 0
            while offset < size, !isStopped.load(ordering: .acquiring) {
                var text = ""
                while text.utf8.count < chunkSize {
                    line += 1
                    text += "10.0.\(line % 256).\(line % 7) - - [01/Dec/2026:22:\(line % 60):00] \"GET /item/\(line) HTTP/1.1\" 200 \(line % 9000)\n"
                }
                let count = Int(min(Int64(chunkSize), size - offset))
                let chunk = Chunk(text.utf8.prefix(count))
                switch deliver(chunk) {
                case .enqueued, .spilled: break
                case .rejected, .terminated: complete(nil); return  // not taken: not counted
                }
                state.withLock { state in
                    chunk.withUnsafeBytes { state.crc.update($0) }
                    state.bytes += Int64(count)
                }
                offset += Int64(count)
            }
            complete(nil)
        }
        thread.name = "producer"
        thread.start()
    }

    /// The stop closure: the thread stops at its next chunk.
    func stop() { isStopped.store(true, ordering: .releasing) }
}
