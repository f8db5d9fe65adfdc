extension RegularFileCopy {
    /// Checks a kernel copy before its commit (`--verify`): the data never passed through
    /// Sluice, so the source is read a second time for its CRC-32 (ISO 3309), then the output is
    /// read back from the disk (``FileSink/openForReadBack()``) and compared, as the pipeline's
    /// check does (``OutputVerifier``).
    ///
    /// Costs a second read of the source on top of the read-back. The source is opened again by
    /// its path and must still be the same file (device and inode).
    ///
    /// Both reads run on the files' own threads, never on the cooperative pool.
    ///
    /// - Parameter size: the bytes the kernel copied (the source's size).
    /// - Returns: the outcome and the source's CRC-32.
    /// - Throws: ``VerificationError`` on a difference (with the first differing offset);
    ///   ``FileError`` of the reads, or `io` when the source was replaced; `CancellationError`.
    func verifyKernelCopy(size: Int64) async throws -> (CopyReport.VerificationOutcome, UInt32) {
        let again = try await FileChunks.open(source.path, chunkSize: source.chunkSize, findsHoles: false)
        guard again.status.isSameFile(as: source.status) else {
            throw FileError(
                code: .io, operation: .read, path: source.path,
                reason: "it was replaced during the copy, so the copy cannot be verified")
        }
        let sourceCRC32 = try await withTaskExecutorPreference(again.preferredExecutor) {
            var crc = CRC32()
            for try await chunk in again { chunk.withUnsafeBytes { crc.update($0) } }
            return crc.value
        }
        let sink = sink
        let verifier = OutputVerifier(
            verification: .sameBytes, destination: sink.destination, source: source, expectedCRC32: sourceCRC32,
            expectedSize: size, chunkSize: source.chunkSize, openWritten: { try await sink.openForReadBack() })
        let outcome = try await withTaskExecutorPreference(BlockingIOExecutor(label: "sluice.verify")) {
            try await verifier.run()
        }
        return (outcome, sourceCRC32)
    }
}
