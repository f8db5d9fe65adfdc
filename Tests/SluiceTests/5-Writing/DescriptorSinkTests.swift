#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SluiceTestSupport
import Testing
@testable import Sluice

@Suite(.timeLimit(.minutes(3)))
struct DescriptorSinkTests {
    /// A standard output that another process set `O_NONBLOCK` on answers `EAGAIN` once its
    /// pipe is full: the sink waits for room, as a blocking write would, and loses nothing.
    @Test func writesEverythingToANonBlockingPipeThatFillsUp() async throws {
        let pipe = try makePipe()
        defer { try? pipe.read.close() }
        _ = fcntl(pipe.write.rawValue, F_SETFL, fcntl(pipe.write.rawValue, F_GETFL) | O_NONBLOCK)
        let full = Latch()
        let refusals = Counter()
        let system = SystemCalls(
            read: SystemCalls.live.read,
            write: { descriptor, buffer, count in
                let result = SystemCalls.live.write(descriptor, buffer, count)
                if case .failure(.resourceTemporarilyUnavailable) = result {
                    refusals.increment()
                    full.open()
                }
                return result
            },
            fsync: SystemCalls.live.fsync)
        let sink = DescriptorSink(pipe.write, path: "-", system: system)
        // 256 KiB, four times a pipe's default buffer: the pipe fills before anything is read.
        let data = randomBytes(count: 256 * 1024, seed: 0xA6A1)
        let reader = Task {
            await full.wait()
            let chunks = try await FileChunks.reading(pipe.read, chunkSize: 16 * 1024)
            var bytes: [UInt8] = []
            for try await chunk in chunks { bytes += chunk.bytes }
            return bytes
        }
        let written = await Result {
            for start in stride(from: 0, to: data.count, by: 64 * 1024) {
                try await sink.write(Chunk(Array(data[start..<(start + 64 * 1024)])))
            }
        }
        full.open()  // so the reader ends even if the pipe never filled
        try pipe.write.close()
        let received = try await reader.value
        try written.get()
        #expect(refusals.current > 0, "the pipe never filled")
        #expect(received == data)
    }
}
