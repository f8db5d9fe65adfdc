import Testing
@testable import Sluice
import SluiceTestSupport

/// `--verify` in the pipeline: the output is read back before the commit; a write that stored
/// other bytes than it was given (injected through the system-call seam) aborts the copy,
/// commits nothing, and names the offset of the first byte that differs.
@Suite(.timeLimit(.minutes(3)))
struct PipelineVerificationTests {
    static let size = 3 * (1 << 20) + 123
    static let corrupted: Int64 = 1_234_567

    /// Copies `source` to `destination` in `directory` through a sink with `system`, verifying.
    static func copy(
        _ sourcePath: Pathname, to destination: Pathname, system: SystemCalls = .live,
        transform: TransformFactory? = nil
    ) async throws -> CopyReport {
        let source = try await FileChunks.open(sourcePath)
        let sink = try await FileSink.create(
            at: FileLocation(path: destination), source: source.status, options: .init(replacesExisting: true), system: system)
        let copy = Pipeline(
            from: source, to: sink, totalBytes: source.expectedSize, options: .init(verifiesOutput: true),
            transform: transform)
        return try await copy.run()
    }

    @Test func aGoodCopyIsVerified() async throws {
        try await withScratchDirectory { directory in
            let data = randomBytes(count: Self.size, seed: 1)
            try writeFile(directory.appending("in.bin"), data)
            let report = try await Self.copy(directory.appending("in.bin"), to: directory.appending("out.bin"))
            #expect(report.verification == .verified)
            #expect(try readFile(directory.appending("out.bin")) == data)
        }
    }

    @Test func aCorruptedWriteAbortsAndNamesTheOffset() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out.bin")
            try writeFile(directory.appending("in.bin"), randomBytes(count: Self.size, seed: 2))
            try writeFile(destination, Array("OLD".utf8))
            let error = await #expect(throws: VerificationError.self) {
                try await Self.copy(
                    directory.appending("in.bin"), to: destination,
                    system: systemCallsCorruptingWrites(atOffset: Self.corrupted))
            }
            #expect(error?.firstDifference == Self.corrupted)
            #expect(error?.destination == destination)
            #expect(error?.description.contains("at offset 1234567") == true)
            #expect(error?.description.contains("'\(destination)'") == true)
            #expect(try readFile(destination) == Array("OLD".utf8))
            #expect(try temporaryFiles(in: directory.path) == [])
        }
    }

    /// A compression is checked by decoding what was written: a flipped byte in the member
    /// fails to decode, or decodes to other data; either way nothing is committed.
    @Test func aCorruptedCompressionIsNotCommitted() async throws {
        try await withScratchDirectory { directory in
            let data = sampleData(count: Self.size)
            try writeFile(directory.appending("in.bin"), data)
            let good = try await Self.copy(
                directory.appending("in.bin"), to: directory.appending("good.gz"),
                transform: { try GzipEncoder() })
            #expect(good.verification == .verified)
            let destination = directory.appending("out.gz")
            await #expect(throws: VerificationError.self) {
                try await Self.copy(
                    directory.appending("in.bin"), to: destination, system: systemCallsCorruptingWrites(atOffset: 5000),
                    transform: { try GzipEncoder() })
            }
            #expect(!exists(destination))
            #expect(try temporaryFiles(in: directory.path) == [])
        }
    }

    /// A decompression's output is read back against the CRC-32 computed while it was written;
    /// the offset is found by decoding the source again beside it.
    @Test func aCorruptedDecompressionNamesTheOffsetInTheDecodedData() async throws {
        try await withScratchDirectory { directory in
            let data = sampleData(count: Self.size)
            try writeFile(directory.appending("in.gz"), try await gzipped(data))
            let good = try await Self.copy(
                directory.appending("in.gz"), to: directory.appending("good.bin"),
                transform: { GzipDecoder() })
            #expect(good.verification == .verified)
            let destination = directory.appending("out.bin")
            let error = await #expect(throws: VerificationError.self) {
                try await Self.copy(
                    directory.appending("in.gz"), to: destination,
                    system: systemCallsCorruptingWrites(atOffset: Self.corrupted),
                    transform: { GzipDecoder() })
            }
            #expect(error?.firstDifference == Self.corrupted)
            #expect(error?.actualSize == Int64(Self.size))
            #expect(!exists(destination))
        }
    }

    /// A source that cannot be read again (here: chunks in memory) still fails the check; the
    /// offset is then unknown, and the message says why.
    @Test func aSourceThatCannotBeReadAgainLeavesTheOffsetUnknown() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out.bin")
            let chunks = (0..<3).map { Chunk(randomBytes(count: 1 << 20, seed: UInt64($0))) }
            let sink = try await FileSink.create(
                at: FileLocation(path: destination), source: nil, options: .init(), system: systemCallsCorruptingWrites(atOffset: 10))
            let copy = Pipeline(from: ChunkList(chunks), to: sink, totalBytes: nil, options: .init(verifiesOutput: true))
            let error = await #expect(throws: VerificationError.self) { try await copy.run() }
            #expect(error?.firstDifference == nil)
            #expect(error?.description.contains("the source cannot be read again") == true)
            #expect(!exists(destination))
        }
    }

    /// A sink that cannot be read back is committed, and the report says it was not verified.
    @Test func aSinkThatCannotBeReadBackIsNotVerified() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out.bin")
            let sink = AnyTestSink(try await FileSink.create(at: destination))
            let copy = Pipeline(
                from: ChunkList([Chunk([1, 2, 3])]), to: sink, totalBytes: nil, options: .init(verifiesOutput: true))
            let report = try await copy.run()
            #expect(report.verification == .notVerified(reason: "the destination cannot be read back"))
            #expect(try readFile(destination) == [1, 2, 3])
        }
    }
}
