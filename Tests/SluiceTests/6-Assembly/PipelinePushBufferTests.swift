import Testing
@testable import Sluice
import SluiceTestSupport

/// A callback-driven producer through a ``PushBuffer`` into ``Pipeline`` and ``FileSink``.
@Suite(.timeLimit(.minutes(3)))
struct PipelinePushBufferTests {
    static func chunk(_ index: Int) -> Chunk {
        Chunk((0..<4096).map { UInt8(truncatingIfNeeded: index &* 7 &+ $0 / 3) })
    }

    @Test func callbackProducerIsWrittenToTheFileAtomically() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let destination = directory.appending("out.bin")
        var expected: [UInt8] = []
        for index in 0..<200 { expected += Self.chunk(index).bytes }
        let buffer = PushBuffer<Chunk>.fromCallbacks(
            capacity: 4, byteBudget: nil, policy: .spill(directory: directory.path, limit: 1 << 30)
        ) { deliver, complete in
            // Everything is pushed before the copy starts: most of it goes to the spill file.
            for index in 0..<200 {
                guard case .enqueued = deliver(Self.chunk(index)) else { continue }
            }
            complete(nil)
            return {}
        }
        let sink = try await FileSink.create(at: destination, options: FileSink.Options(synchronizes: false))
        let copy = Pipeline(from: buffer, to: sink, totalBytes: Int64(expected.count))
        let updates = copy.progress.subscribe()
        let report = try await copy.run()
        #expect(report.bytesWritten == Int64(expected.count))
        #expect(report.crc32 == CRC32(expected).value)
        let written = try readFile(destination)
        #expect(written == expected)
        var last: ProgressSnapshot?
        for await snapshot in updates { last = snapshot }
        #expect(last?.fraction == 1.0)
        #expect(buffer.statistics.elementsSpilled == 196)
        #expect(try entries(in: directory.path) == ["out.bin"])
    }

    @Test func capacityFailureLeavesNoOutputAndNoTemporaryFile() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let destination = directory.appending("out.bin")
        let producer = LockingSource()
        do {
            let buffer = PushBuffer<Chunk>.fromCallbacks(capacity: 4, byteBudget: nil) { deliver, complete in
                for index in 0..<10 {
                    if case .rejected = deliver(Self.chunk(index)) { break }
                }
                return { producer.stop() }
            }
            let sink = try await FileSink.create(at: destination, options: FileSink.Options(synchronizes: false))
            let error = try await #require(throws: CapacityExceededError.self) {
                try await Pipeline(from: buffer, to: sink, totalBytes: nil).run()
            }
            #expect(error.capacity == 4 && error.bufferedCount == 4 && error.bufferedBytes == 4 * 4096)
            await producer.stopped.wait()
            await buffer.stopsScheduledSoFarHaveRun()
            #expect(producer.stops == 1)
        }
        let names = try entries(in: directory.path)
        #expect(names.isEmpty, "left behind: \(names)")
    }
}
