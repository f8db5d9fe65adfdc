extension FileCopy {
    /// Checks the output before the commit (``Options/verification``), on a thread of its own.
    ///
    /// The CRC-32 to match is the one the copy computed: the reading stage's for
    /// ``PipelineOptions/Verification/sameBytes``, the transform's otherwise (the input's for a compression,
    /// the output's for a decompression). The size is the bytes read, or for
    /// ``PipelineOptions/Verification/decodedSource`` the bytes written.
    ///
    /// Ranges the kernel copied (``Chunk/sourceRange``) never passed through the pipeline: a
    /// clone shares the source's extents and is not read back
    /// (``CopyReport/VerificationOutcome/sharedExtents``); for `copy_file_range(2)`, the source
    /// is read a second time for its CRC-32 (``sourceCRC32(of:)``), then the output is read back
    /// and compared as for the pipeline.
    ///
    /// - Returns: the outcome, ``CopyReport/VerificationOutcome/notVerified(reason:)`` for a sink that is not
    ///   a `ReadBackSink` or a transform that reports no CRC-32; and the source's CRC-32 when it
    ///   was read again for it.
    /// - Throws: ``VerificationError`` on a difference; the errors of the reads.
    static func verify(
        _ verification: PipelineOptions.Verification, of sink: Sink, results: [StageResult], recorder: ProgressRecorder,
        fileSource: FileChunks?
    ) async throws -> (outcome: CopyReport.VerificationOutcome, sourceCRC32: UInt32?) {
        guard let readable = sink as? any ReadBackSink else {
            return (.notVerified(reason: "the destination cannot be read back"), nil)
        }
        var expectedCRC32: UInt32?
        var sourceCRC32: UInt32?
        for result in results {
            switch (result, verification) {
            case (.read(_, _, .clone), .sameBytes): return (.sharedExtents, nil)
            case (.read(_, _, .some), .sameBytes):
                guard let fileSource else { break }
                sourceCRC32 = try await Self.sourceCRC32(of: fileSource)
                expectedCRC32 = sourceCRC32
            case (.read(_, let crc32, nil), .sameBytes): expectedCRC32 = crc32
            case (.transformed(let summary), .gzipOfSource), (.transformed(let summary), .decodedSource):
                expectedCRC32 = summary.crc32
            default: break
            }
        }
        guard let expectedCRC32 else {
            return (.notVerified(reason: "the copy computed no CRC-32 to verify against"), nil)
        }
        let expectedSize = verification == .decodedSource
            ? recorder.bytesWritten.load(ordering: .relaxed) : recorder.bytesCompleted.load(ordering: .relaxed)
        let verifier = OutputVerifier(
            verification: verification, destination: readable.destination,
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
