import Foundation
import Sluice
import Synchronization

/// A source that cannot pause: a thread that pushes `size` bytes of pseudo-random data in
/// chunks of `chunkSize` bytes as fast as it can, ignoring "pause", until it is done, stopped,
/// or refused.
final class Producer: Sendable {
    private let size: Int64
    private let chunkSize: Int
    private let deliver: @Sendable (Chunk) -> PushBuffer<Chunk>.YieldResult
    private let complete: @Sendable ((any Error)?) -> Void
    private let isStopped = Atomic(false)
    private let state = Mutex((crc: CRC32(), pushed: Int64(0), outcome: "running"))

    init(
        size: Int64, chunkSize: Int, deliver: @escaping @Sendable (Chunk) -> PushBuffer<Chunk>.YieldResult,
        complete: @escaping @Sendable ((any Error)?) -> Void
    ) {
        self.size = size
        self.chunkSize = chunkSize
        self.deliver = deliver
        self.complete = complete
    }

    /// Starts the thread.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "producer"
        thread.start()
    }

    /// The stop closure the callback adapter installs: the thread stops at its next chunk.
    func stop() {
        isStopped.store(true, ordering: .releasing)
    }

    /// The CRC-32 and count of the bytes the buffer took, and how the producer ended.
    var summary: (crc: CRC32, pushed: Int64, outcome: String) {
        state.withLock { $0 }
    }

    private func run() {
        var random: UInt64 = 0x9E37_79B9_7F4A_7C15
        var offset: Int64 = 0
        while offset < size {
            if isStopped.load(ordering: .acquiring) {
                record(outcome: "stopped by the consumer at byte \(offset)")
                return
            }
            let count = Int(min(Int64(chunkSize), size - offset))
            let chunk = Chunk(capacity: count) { buffer in
                let words = buffer.bindMemory(to: UInt64.self)
                for index in 0..<(count / 8) {
                    random &+= 0x9E37_79B9_7F4A_7C15
                    var z = random
                    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                    words[index] = z ^ (z >> 31)
                }
                for index in (count / 8 * 8)..<count { buffer[index] = 0x5A }
                return count
            }
            switch deliver(chunk) {
            case .enqueued, .spilled:
                state.withLock { state in
                    chunk.withUnsafeBytes { state.crc.update($0) }
                    state.pushed += Int64(count)
                }
                offset += Int64(count)
            case .rejected:
                record(outcome: "refused at byte \(offset): the buffer is full and the source cannot pause")
                return
            case .terminated:
                record(outcome: "the stream ended at byte \(offset)")
                return
            }
        }
        record(outcome: "done")
        complete(nil)
    }

    private func record(outcome: String) {
        state.withLock { $0.outcome = outcome }
    }
}
