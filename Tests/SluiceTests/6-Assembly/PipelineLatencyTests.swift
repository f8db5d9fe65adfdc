import SluiceTestSupport
import Testing
@testable import Sluice

/// A chunk that arrives while its source is otherwise idle reaches the sink at once: the batched
/// hand-offs (a writer woken once per half a channel, a read stage on the sink's thread) never
/// make a chunk wait for the ones after it. Each test keeps its source open and idle until the
/// sink has seen the chunk, so a pipeline that waited for more would never end (the time limit).
@Suite(.timeLimit(.minutes(3)))
struct PipelineLatencyTests {
    /// A sink on a thread of its own, as ``FileSink`` is, that opens a latch once it has been
    /// handed `expected` bytes.
    actor WatchingSink: ChunkSink {
        nonisolated let executor = BlockingIOExecutor(label: "test.watching-sink")
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        nonisolated var preferredExecutor: (any TaskExecutor)? { executor }
        let expected: Int
        let reached = Latch()
        private(set) var bytes: [UInt8] = []

        init(expecting expected: Int) {
            self.expected = expected
        }

        func write(_ chunk: Chunk) async throws {
            bytes += chunk.bytes
            if bytes.count >= expected { reached.open() }
        }

        func commit() async throws {}
        func abort() async {}
    }

    @Test func aChunkOnAnIdlePipeReachesTheSinkAtOnce() async throws {
        let pipe = try makePipe()
        defer { try? pipe.read.close() }
        let source = try await FileChunks.reading(pipe.read, chunkSize: 4096)
        let sink = WatchingSink(expecting: 5)
        let copy = Task { try await Pipeline(from: source, to: sink, totalBytes: nil).run() }
        try Array("hello".utf8).withUnsafeBytes { try pipe.write.write(contentsOf: $0) }
        await sink.reached.wait()  // the pipe is still open and idle
        try pipe.write.close()
        let report = try await copy.value
        #expect(report.bytesWritten == 5)
        #expect(await sink.bytes == Array("hello".utf8))
    }

    @Test func aChunkPushedIntoAnIdleBufferReachesTheSinkAtOnce() async throws {
        let buffer = PushBuffer<Chunk>(capacity: 16)
        let sink = WatchingSink(expecting: 5)
        let copy = Task { try await Pipeline(from: buffer, to: sink, totalBytes: nil).run() }
        _ = buffer.yield(Chunk(Array("hello".utf8)))
        await sink.reached.wait()  // nothing else is pushed, and the buffer stays open
        _ = buffer.yield(Chunk(Array(" world".utf8)))
        buffer.finish()
        let report = try await copy.value
        #expect(report.bytesWritten == 11)
        #expect(await sink.bytes == Array("hello world".utf8))
    }
}
