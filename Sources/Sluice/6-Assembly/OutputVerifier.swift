extension Pipeline {
    /// Checks the output before the commit (``PipelineOptions/verifiesOutput``), on a thread of
    /// its own, as the transform says (``VerifiableTransform``), or as the source's bytes
    /// without one.
    ///
    /// The CRC-32 to match is the one the copy computed: the reading stage's without a
    /// transform, the transform's otherwise (of its decoded side: the input of an encoder, the
    /// output of a decoder). The size is the bytes read, or for a decoder the bytes written.
    ///
    /// Ranges the kernel copied (``Chunk/sourceRange``) never passed through the pipeline: a
    /// clone shares the source's extents and is not read back
    /// (``CopyReport/VerificationOutcome/sharedExtents``); for `copy_file_range(2)`, the source
    /// is read a second time for its CRC-32 (``sourceCRC32(of:)``), then the output is read back
    /// and compared as for the pipeline.
    ///
    /// - Returns: the outcome, ``CopyReport/VerificationOutcome/notVerified(reason:)`` for a sink
    ///   that is not a `ReadBackSink`, a transform that is not a ``VerifiableTransform`` or one
    ///   that reports no CRC-32; and the source's CRC-32 when it was read again for it.
    /// - Throws: ``VerificationError`` on a difference; the errors of the reads.
    func verifyOutput(
        results: [StageResult], recorder: ProgressRecorder
    ) async throws -> (outcome: CopyReport.VerificationOutcome, sourceCRC32: UInt32?) {
        guard let written = sink as? any ReadBackSink else {
            return (.notVerified(reason: "the destination cannot be read back"), nil)
        }
        var expectedCRC32: UInt32?
        var sourceCRC32: UInt32?
        var (decoded, decoder) = (VerificationError.Decoded.neither, nil as Sluice.TransformFactory?)
        for result in results {
            switch result {
            case .read(_, _, .clone): return (.sharedExtents, nil)
            case .read(_, _, .some):
                guard let file else { break }
                sourceCRC32 = try await Self.sourceCRC32(of: file)
                expectedCRC32 = sourceCRC32
            case .read(_, let crc32, nil): expectedCRC32 = expectedCRC32 ?? crc32
            case .transformed(_, nil):
                return (.notVerified(reason: "the transform does not say how to read its output back"), nil)
            case .transformed(let summary, .encodesInput(let makeDecoder)?):
                (expectedCRC32, decoded, decoder) = (summary.crc32, .output, makeDecoder)
            case .transformed(let summary, .decodesInput?):
                (expectedCRC32, decoded, decoder) = (summary.crc32, .source, makeTransform)
            case .written: break
            }
        }
        guard let expectedCRC32 else {
            return (.notVerified(reason: "the copy computed no CRC-32 to verify against"), nil)
        }
        let verifier = OutputVerifier(
            written: written, source: file?.status.kind == .regular ? file : nil, decoded: decoded, decoder: decoder,
            expectedCRC32: expectedCRC32,
            expectedSize: decoded == .source
                ? recorder.bytesWritten.load(ordering: .relaxed) : recorder.bytesCompleted.load(ordering: .relaxed),
            chunkSize: file?.chunkSize ?? FileChunks.defaultChunkSize)
        // The CRC-32 of the data read back is CPU work: never on the cooperative pool.
        let outcome = try await withTaskExecutorPreference(BlockingIOExecutor(label: "sluice.verify")) {
            try await verifier.run()
        }
        return (outcome, sourceCRC32)
    }

    /// The CRC-32 (ISO 3309) of the file `file` was opened from, read again by its path on a
    /// thread of its own: for a copy the kernel made, whose data never passed through Sluice.
    /// The file must still be the same (device and inode).
    ///
    /// - Throws: ``FileError`` of the reads, or `io` when the source was replaced;
    ///   `CancellationError`.
    static func sourceCRC32(of file: FileChunks) async throws -> UInt32 {
        guard let again = try await file.reopened() else {
            throw FileError(
                code: .io, operation: .read, path: file.path,
                reason: "it was replaced during the copy, so the copy cannot be verified")
        }
        return try await withTaskExecutorPreference(again.preferredExecutor) {
            var crc = CRC32()
            for try await chunk in again { chunk.withUnsafeBytes { crc.update($0) } }
            return crc.value
        }
    }
}

extension FileChunks {
    /// The file these chunks were opened from, opened again by its path and read through
    /// `read(2)` alone (a hole map may hide data); `nil` when the path now names another file
    /// (device and inode).
    ///
    /// - Throws: the ``FileError`` of the `open`.
    fileprivate func reopened() async throws -> FileChunks? {
        let again = try await FileChunks.open(path, chunkSize: chunkSize, findsHoles: false)
        return again.status.isSameFile(as: status) ? again : nil
    }
}

/// Reads back what a ``Pipeline`` wrote, before the commit, and checks it against the CRC-32
/// and size the copy computed while it ran (``Pipeline/verifyOutput(results:recorder:)``): one
/// read of the output, and only on a mismatch a second pass beside the source
/// (``TransformVerification``), each through a bounded channel, a few chunks in memory whatever
/// the size.
///
/// Runs its reads and decoding on the files' own threads (``BlockingIOExecutor``) and its CRC-32
/// in the calling task, which ``Pipeline`` puts on a thread of its own.
struct OutputVerifier: Sendable {
    /// The sink whose data is read back; messages name its destination.
    let written: any ReadBackSink
    /// The source, when it is a regular file that can be opened again by its path.
    let source: FileChunks?
    /// Which side is decoded before the comparison, by a transform of `decoder` (`nil` for
    /// neither): ``TransformVerification``.
    let decoded: VerificationError.Decoded
    let decoder: Sluice.TransformFactory?
    let expectedCRC32: UInt32
    let expectedSize: Int64
    let chunkSize: Int

    /// Reads the output back and compares.
    ///
    /// - Returns: ``CopyReport/VerificationOutcome/verified``, or ``CopyReport/VerificationOutcome/notVerified(reason:)``
    ///   for an output that cannot be read back.
    /// - Throws: ``VerificationError`` when the output differs or does not decode (the
    ///   decoder's error its cause); the ``FileError`` of a read, `fsync` or `open`;
    ///   `CancellationError`.
    func run() async throws -> CopyReport.VerificationOutcome {
        guard let descriptor = try await written.openForReadBack() else {
            return .notVerified(reason: "'\(written.destination)' is written in place (not a regular file) and cannot be read back")
        }
        var actual: (crc32: UInt32, size: Int64)?
        let kind: VerificationError.Kind
        do {
            let read = try await withChunks(ofDescriptor: descriptor, decoding: .output) { channel in
                var crc = CRC32()
                var size: Int64 = 0
                for try await chunk in channel {
                    chunk.withUnsafeBytes { crc.update($0) }
                    size += Int64(chunk.count)
                }
                return (crc32: crc.value, size: size)
            }
            if read == (expectedCRC32, expectedSize) { return .verified }
            actual = read
            kind = try await mismatch()
        } catch let failure as DecoderFailure {
            kind = .undecodable(failure.cause)
        }
        throw VerificationError(
            kind, destination: written.destination, decoded: decoded, expectedCRC32: expectedCRC32,
            expectedSize: expectedSize, actualCRC32: actual?.crc32, actualSize: actual?.size)
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

    /// The mismatch found: the offset of the first byte that differs between the source and the
    /// output, both read again (the side ``decoded`` says decoded), `nil` if they are the same
    /// now (the source changed back, or a read came out differently the first time); or, when
    /// the source cannot be read again or a read of this pass fails, the reason it is unknown.
    ///
    /// - Throws: `CancellationError` only.
    private func mismatch() async throws -> VerificationError.Kind {
        func unlocated(_ reason: String) -> VerificationError.Kind {
            .mismatch(firstDifference: nil, unlocatedReason: reason)
        }
        do {
            guard let source else { return unlocated("the source cannot be read again") }
            guard let again = try await source.reopened() else {
                return unlocated("'\(source.path)' is no longer the file that was read")
            }
            guard let descriptor = try await written.openForReadBack() else {
                return unlocated("the output cannot be read back")
            }
            let offset = try await withChunks(of: again, decoding: .source) { reference in
                try await withChunks(ofDescriptor: descriptor, decoding: .output) { output in
                    try await ChunkComparison.firstDifference(reference, output)
                }
            }
            return .mismatch(firstDifference: offset, unlocatedReason: nil)
        } catch let error as CancellationError {
            throw error
        } catch {
            return unlocated("\(error)")
        }
    }

    /// Runs `body` with the chunks read from `descriptor` (decoded when it is the side
    /// ``decoded``), then closes it.
    private func withChunks<R: Sendable>(
        ofDescriptor descriptor: Descriptor, decoding side: VerificationError.Decoded,
        _ body: (BoundedChannel<Chunk>) async throws -> R
    ) async throws -> R {
        defer { try? descriptor.close() }
        let chunks = try await FileChunks.reading(descriptor, path: written.destination, chunkSize: chunkSize)
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
            defer { group.cancelAll() }
            return try await body(channel)
        }
    }
}
