extension FileCopy {
    /// Checks the output before the commit (``Options/verification``), on a thread of its own.
    ///
    /// The CRC-32 to match is the one the copy computed: the reading stage's for
    /// ``PipelineOptions/Verification/sameBytes``, the transform's otherwise (the input's for a compression,
    /// the output's for a decompression). The size is the bytes read, or for
    /// ``PipelineOptions/Verification/decodedSource`` the bytes written.
    ///
    /// - Returns: the outcome, ``CopyReport/VerificationOutcome/notVerified(reason:)`` for a sink that is not
    ///   a `ReadBackSink` or a transform that reports no CRC-32.
    /// - Throws: ``VerificationError`` on a difference; the errors of the reads.
    static func verify(
        _ verification: PipelineOptions.Verification, of sink: Sink, results: [StageResult], recorder: ProgressRecorder,
        fileSource: FileChunks?
    ) async throws -> CopyReport.VerificationOutcome {
        guard let readable = sink as? any ReadBackSink else {
            return .notVerified(reason: "the destination cannot be read back")
        }
        var expectedCRC32: UInt32?
        for result in results {
            switch (result, verification) {
            case (.read(_, let crc32), .sameBytes): expectedCRC32 = crc32
            case (.transformed(let summary), .gzipOfSource), (.transformed(let summary), .decodedSource):
                expectedCRC32 = summary.crc32
            default: break
            }
        }
        guard let expectedCRC32 else {
            return .notVerified(reason: "the copy computed no CRC-32 to verify against")
        }
        let expectedSize = verification == .decodedSource
            ? recorder.bytesWritten.load(ordering: .relaxed) : recorder.bytesCompleted.load(ordering: .relaxed)
        let verifier = OutputVerifier(
            verification: verification, destination: readable.destination,
            source: fileSource?.status.kind == .regular ? fileSource : nil, expectedCRC32: expectedCRC32,
            expectedSize: expectedSize, chunkSize: fileSource?.chunkSize ?? FileChunks.defaultChunkSize,
            openWritten: { try await readable.openForReadBack() })
        // The CRC-32 of the data read back is CPU work: never on the cooperative pool.
        return try await withTaskExecutorPreference(BlockingIOExecutor(label: "sluice.verify")) {
            try await verifier.run()
        }
    }

}
