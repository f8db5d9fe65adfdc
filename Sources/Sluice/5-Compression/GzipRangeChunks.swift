/// The uncompressed bytes of a range of a gzip file, as an asynchronous sequence of chunks: what
/// ``GzipDecoder/decompressedChunks(of:in:chunkSize:threadCount:onWarning:)`` returns, and
/// `sluice decompress --range` reads.
///
/// Each iteration reads and decodes the range again (the reads are `pread(2)`s at absolute
/// offsets): a producing task of its own, on the reader's thread, sends the chunks through a
/// ``BoundedChannel`` of two, so at most two chunks wait for the consumer, and decoding stops
/// when the iterator is released.
///
/// Concurrency contract: `Sendable`; an iterator belongs to one task.
package struct GzipRangeChunks: AsyncSequence, Sendable {
    package typealias Element = Chunk
    package typealias Failure = any Error

    let reader: GzipRangeReader

    /// Opens `path` and finds where `range` starts, on a thread of its own.
    ///
    /// - Throws: as ``GzipDecoder/decompressedChunks(of:in:chunkSize:threadCount:onWarning:)``.
    package static func open(
        _ path: Pathname, range: Range<Int64>, chunkSize: Int = FileChunks.defaultChunkSize, threadCount: Int = 1,
        onWarning: @escaping @Sendable (StageWarning) -> Void = { _ in }
    ) async throws -> GzipRangeChunks {
        let executor = BlockingIOExecutor(label: "sluice.range")
        let reader = try await Task(executorPreference: executor) {
            try GzipRangeReader(
                path: path, range: range, chunkSize: chunkSize, threadCount: threadCount, executor: executor, onWarning: onWarning)
        }.value
        return GzipRangeChunks(reader: reader)
    }

    /// Whether the range starts at an access point of an indexed member, so that only the
    /// segments it overlaps are read; `false` when it is decoded from the start of a member
    /// without an index (gzip's, pigz's, BGZF's, or an index that cannot be used).
    package var startsAtAccessPoint: Bool { reader.startsAtAccessPoint }

    /// The warnings of the last iteration that ended (a segment that did not match its index,
    /// garbage after the last member).
    package var warnings: [StageWarning] { reader.warnings.withLock { $0 } }

    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(reader: reader)
    }

    /// Takes the chunks the producing task sends; starts it with the first ``next()``.
    package struct AsyncIterator: AsyncIteratorProtocol {
        let reader: GzipRangeReader
        var chunks: BoundedChannel<Chunk>.Iterator?

        package mutating func next() async throws -> Chunk? {
            if chunks == nil {
                let channel = BoundedChannel<Chunk>(capacity: 2)
                let reader = self.reader
                Task(executorPreference: reader.executor) {
                    do {
                        try await reader.produce { chunk in try await channel.send(chunk) }
                        channel.finish()
                    } catch {
                        channel.fail(error)
                    }
                }
                chunks = channel.makeAsyncIterator()
            }
            return try await chunks!.next()
        }
    }
}

extension GzipDecoder {
    /// The uncompressed bytes `range` of the gzip file at `path`, read at random: for ingest
    /// pipelines that resume or sample big archives (`sluice decompress --range`).
    ///
    /// Offsets count the file's whole output, every member's (as `gzip -dc` writes it). In a
    /// member Sluice indexed (<doc:IndexedGzip>), members before the range are passed over by
    /// their indexes, and only the header and the segments the range overlaps are read, each
    /// decoded from its access point (in parallel on `threadCount` threads) and checked against
    /// the index: its compressed length, its uncompressed length and CRC-32, and that it ends at
    /// an access point. A segment that does not match is reported to `onWarning` and its member
    /// is decoded from its start instead, so a damaged index never gives bytes `gzip -d` would
    /// not give; what is not read is not checked (the member's trailer CRC-32 is checked only
    /// when it is decoded from its start). Without an index (files of gzip, pigz or `bgzip`),
    /// the file is decoded from its start (or from the first member without an index after
    /// indexed ones) and the bytes before the range are dropped: the same bytes, at the cost of
    /// decoding them.
    ///
    /// ```swift
    /// // One MiB from the middle of a big archive.
    /// for try await chunk in try await GzipDecoder.decompressedChunks(of: "logs.gz", in: 512 << 20 ..< 513 << 20) {
    ///     try await sink.write(chunk)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - path: a gzip file (a regular file: it is read with `pread(2)`).
    ///   - range: uncompressed byte offsets, `0...`, `a..<b`, `a...b` or `a...`; the part past the
    ///     output's end is empty.
    ///   - chunkSize: the largest chunk in bytes; default 1 MiB.
    ///   - threadCount: the threads that decode segments at once; default 1.
    ///   - onWarning: called, on the decoding thread, with each condition met that did not stop
    ///     the decoding (a segment that did not match its index, garbage after the last member).
    /// - Returns: a sequence of the range's bytes in order, in chunks of 1...`chunkSize` bytes.
    ///   Each iteration decodes anew, on a thread of its own, at most two chunks ahead of the
    ///   consumer; releasing the iterator stops it.
    /// - Throws: here, ``FileError`` (`open`, `fstat`, `read`; `isDirectory`) and ``GzipError``
    ///   with ``GzipError/Kind/notGzip`` for a file that does not start with a gzip member;
    ///   while iterating, ``FileError`` (`read`) and the ``GzipError``s of ``process(_:emit:)``
    ///   for what it decodes.
    public static func decompressedChunks(
        of path: Pathname, in range: some RangeExpression<Int64>, chunkSize: Int = 1 << 20, threadCount: Int = 1,
        onWarning: @escaping @Sendable (StageWarning) -> Void = { _ in }
    ) async throws -> some AsyncSequence<Chunk, any Error> & Sendable {
        precondition(chunkSize > 0 && threadCount > 0, "chunkSize and threadCount must be > 0")
        let bounds = range.relative(to: 0..<Int64.max)
        precondition(bounds.lowerBound >= 0, "a range of a decompressed file starts at 0 or later")
        return try await GzipRangeChunks.open(
            path, range: bounds, chunkSize: chunkSize, threadCount: threadCount, onWarning: onWarning)
    }
}
