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
    /// - Parameter makeTransform: the copy's transform factory, which decodes the source again
    ///   for a decoder's check.
    /// - Returns: the outcome, ``CopyReport/VerificationOutcome/notVerified(reason:)`` for a sink
    ///   that is not a `ReadBackSink`, a transform that is not a ``VerifiableTransform`` or one
    ///   that reports no CRC-32; and the source's CRC-32 when it was read again for it.
    /// - Throws: ``VerificationError`` on a difference; the errors of the reads.
    static func verify(
        _ sink: Sink, results: [StageResult], recorder: ProgressRecorder, fileSource: FileChunks?,
        makeTransform: Sluice.TransformFactory?
    ) async throws -> (outcome: CopyReport.VerificationOutcome, sourceCRC32: UInt32?) {
        guard let readable = sink as? any ReadBackSink else {
            return (.notVerified(reason: "the destination cannot be read back"), nil)
        }
        var expectedCRC32: UInt32?
        var sourceCRC32: UInt32?
        var (decoded, decoder) = (VerificationError.Decoded.neither, nil as Sluice.TransformFactory?)
        for result in results {
            switch result {
            case .read(_, _, .clone): return (.sharedExtents, nil)
            case .read(_, _, .some):
                guard let fileSource else { break }
                sourceCRC32 = try await Self.sourceCRC32(of: fileSource)
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
        let expectedSize = decoded == .source
            ? recorder.bytesWritten.load(ordering: .relaxed) : recorder.bytesCompleted.load(ordering: .relaxed)
        let verifier = OutputVerifier(
            decoded: decoded, decoder: decoder, destination: readable.destination,
            source: fileSource?.status.kind == .regular ? fileSource : nil, expectedCRC32: expectedCRC32,
            expectedSize: expectedSize, chunkSize: fileSource?.chunkSize ?? FileChunks.defaultChunkSize,
            openWritten: { try await readable.openForReadBack() })
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
        let again = try await FileChunks.open(file.path, chunkSize: file.chunkSize, findsHoles: false)
        guard again.status.isSameFile(as: file.status) else {
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
