#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads back what a ``Pipeline`` wrote, before the commit, and checks it against the CRC-32
/// and size the copy computed while it ran (``PipelineOptions/verifiesOutput``).
///
/// The check costs one read of the output (decoded, for a transform that encodes), in chunks,
/// through a bounded channel: a few chunks in memory whatever the size. Only on a mismatch does
/// a second pass read the source again (decoded, for a transform that decodes) beside the
/// output, to find the first byte that differs; a source that cannot be read again (a pipe,
/// standard input) leaves the offset unknown.
///
/// Runs its reads and decoding on the files' own threads (``BlockingIOExecutor``) and its CRC-32
/// in the calling task, which ``Pipeline`` puts on a thread of its own.
struct OutputVerifier: Sendable {
    /// Which side is decoded before the comparison, by a transform of `decoder` (`nil` for
    /// neither): ``TransformVerification``.
    let decoded: VerificationError.Decoded
    let decoder: (@Sendable () throws -> any ChunkTransform)?
    /// The path messages name: the destination.
    let destination: Pathname
    /// The source, when it is a regular file that can be opened again by its path.
    let source: FileChunks?
    let expectedCRC32: UInt32
    let expectedSize: Int64
    let chunkSize: Int
    /// Opens the written data for reading from its start (`ReadBackSink.openForReadBack()`);
    /// `nil` when it cannot be read back.
    let openWritten: @Sendable () async throws -> Descriptor?

    /// Reads the output back and compares.
    ///
    /// - Returns: ``CopyReport/VerificationOutcome/verified``, or ``CopyReport/VerificationOutcome/notVerified(reason:)``
    ///   for an output that cannot be read back.
    /// - Throws: ``VerificationError`` when the output differs or does not decode (the
    ///   decoder's error its cause); the ``FileError`` of a read, `fsync` or `open`;
    ///   `CancellationError`.
    func run() async throws -> CopyReport.VerificationOutcome {
        guard let written = try await openWritten() else {
            return .notVerified(reason: "'\(destination)' is written in place (not a regular file) and cannot be read back")
        }
        let actual: (crc32: UInt32, size: Int64)
        do {
            actual = try await withChunks(ofDescriptor: written, decoding: .output) { channel in
                var crc = CRC32()
                var size: Int64 = 0
                for try await chunk in channel {
                    chunk.withUnsafeBytes { crc.update($0) }
                    size += Int64(chunk.count)
                }
                return (crc.value, size)
            }
        } catch let failure as DecoderFailure {
            throw VerificationError(
                .undecodable(failure.cause), destination: destination, decoded: decoded, expectedCRC32: expectedCRC32,
                expectedSize: expectedSize, actualCRC32: nil, actualSize: nil)
        }
        if actual.crc32 == expectedCRC32 && actual.size == expectedSize { return .verified }
        let kind: VerificationError.Kind
        do {
            kind = .mismatch(firstDifference: try await firstDifference(), unlocatedReason: nil)
        } catch let error as CancellationError {
            throw error
        } catch {
            kind = .mismatch(firstDifference: nil, unlocatedReason: "\(error)")
        }
        throw VerificationError(
            kind, destination: destination, decoded: decoded, expectedCRC32: expectedCRC32,
            expectedSize: expectedSize, actualCRC32: actual.crc32, actualSize: actual.size)
    }

    /// Reasons the first difference cannot be located, as errors of the second pass.
    struct Unlocatable: Error, CustomStringConvertible {
        var description: String
    }

    /// An error the decoder threw, told apart from those of the reads; described as its cause.
    struct DecoderFailure: Error, CustomStringConvertible {
        var cause: any Error
        var description: String { "\(cause)" }

        /// Runs `body`, a step of the decoder: its own errors wrapped, those of its `emit` (the
        /// channel's, a cancellation) as they are.
        static func wrapping<R>(_ body: () async throws -> R) async throws -> R {
            do { return try await body() } catch where error is CancellationError || error is BoundedChannel<Chunk>.SendError {
                throw error
            } catch {
                throw DecoderFailure(cause: error)
            }
        }
    }

    /// The offset of the first byte that differs between the source and the output, both read
    /// again (the side ``decoded`` says decoded); `nil` if they are the same now (the source
    /// changed back, or a read came out differently the first time).
    ///
    /// - Throws: ``Unlocatable`` when the source cannot be read again; the errors of the reads.
    private func firstDifference() async throws -> Int64? {
        guard let source else { throw Unlocatable(description: "the source cannot be read again") }
        // Through read(2) alone: a hole map may hide data.
        let again = try await FileChunks.open(source.path, chunkSize: chunkSize, findsHoles: false)
        guard again.status.isSameFile(as: source.status) else {
            throw Unlocatable(description: "'\(source.path)' is no longer the file that was read")
        }
        guard let written = try await openWritten() else {
            throw Unlocatable(description: "the output cannot be read back")
        }
        return try await withChunks(of: again, decoding: .source) { reference in
            try await withChunks(ofDescriptor: written, decoding: .output) { output in
                try await ChunkComparison.firstDifference(reference, output)
            }
        }
    }

    /// Runs `body` with the chunks read from `descriptor` (decoded when it is the side
    /// ``decoded``), then closes it.
    private func withChunks<R: Sendable>(
        ofDescriptor descriptor: Descriptor, decoding side: VerificationError.Decoded,
        _ body: (BoundedChannel<Chunk>) async throws -> R
    ) async throws -> R {
        defer { try? descriptor.close() }
        let chunks = try await FileChunks.reading(descriptor, path: destination, chunkSize: chunkSize)
        return try await withChunks(of: chunks, decoding: side, body)
    }

    /// Runs `body` with the chunks of `chunks` (decoded when they are the side ``decoded``),
    /// produced on the file's own thread into a channel of four chunks; a producer still running
    /// when `body` returns is cancelled.
    private func withChunks<R: Sendable>(
        of chunks: FileChunks, decoding side: VerificationError.Decoded,
        _ body: (BoundedChannel<Chunk>) async throws -> R
    ) async throws -> R {
        let channel = BoundedChannel<Chunk>(capacity: 4, byteBudget: nil)
        let decoder = side == decoded ? decoder : nil
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask(executorPreference: chunks.preferredExecutor) {
                do {
                    if let decoder {
                        var transform = try await DecoderFailure.wrapping { try decoder() }
                        for try await chunk in chunks {
                            try await DecoderFailure.wrapping { try await transform.process(chunk, emit: channel.send) }
                        }
                        _ = try await DecoderFailure.wrapping { try await transform.finish(emit: channel.send) }
                    } else {
                        for try await chunk in chunks { try await channel.send(chunk) }
                    }
                    channel.finish()
                } catch {
                    channel.fail(error)
                    throw error
                }
            }
            do {
                let result = try await body(channel)
                group.cancelAll()
                return result
            } catch {
                group.cancelAll()
                throw error
            }
        }
    }
}
