import Testing
@testable import Sluice
import SluiceTestSupport

/// A file's reader and sink given one ``BlockingIOExecutor`` (as ``Copier`` gives each
/// file in flight): both run on it, and the copy is the same as with threads of their own.
@Suite(.timeLimit(.minutes(3)))
struct SharedExecutorCopyTests {
    static let noFsync = FileSink.Options(synchronizes: false)

    @Test(arguments: [0, 1, 4096, 3 * 4096 + 7])
    func aReaderAndASinkOnOneExecutorCopyTheFile(size: Int) async throws {
        try await withScratchDirectory { directory in
            let source = directory.appending("in.bin")
            let destination = directory.appending("out.bin")
            let data = randomBytes(count: size, seed: UInt64(size) + 3)
            try writeFile(source, data)
            let executor = BlockingIOExecutor(label: "test.shared")

            let chunks = try await FileChunks.open(source, chunkSize: 4096, executor: executor)
            let sink = try await FileSink.create(at: FileLocation(path: destination), source: chunks.status, options: Self.noFsync, executor: executor)
            #expect(chunks.reader.executor === executor)
            #expect(sink.executor === executor)
            var options = RegularFileCopy.Options()
            options.forcesPipeline = true
            options.pipeline.computesCRC32 = true
            let report = try await RegularFileCopy(from: chunks, to: sink, options: options).run()

            #expect(try readFile(destination) == data)
            #expect(report.bytesRead == Int64(size))
            #expect(report.crc32 == CRC32(data).value)
            #expect(try temporaryFiles(in: directory.path).isEmpty)
        }
    }

    @Test func withoutAnExecutorEachHasItsOwn() async throws {
        try await withScratchDirectory { directory in
            let source = directory.appending("in.bin")
            try writeFile(source, [1, 2, 3])
            let chunks = try await FileChunks.open(source)
            let sink = try await FileSink.create(at: directory.appending("out.bin"), options: Self.noFsync)
            #expect(chunks.reader.executor !== sink.executor)
            await sink.abort()
        }
    }
}
