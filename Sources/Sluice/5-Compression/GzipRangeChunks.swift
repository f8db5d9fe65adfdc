/// The uncompressed bytes of a range of a gzip file, as an asynchronous sequence of chunks: what
/// ``GzipDecoder/decompressedChunks(of:in:chunkSize:threadCount:onWarning:)`` returns, and
/// `sluice decompress --range` reads.
///
/// Each iteration reads and decodes the range again (the reads are `pread(2)`s at absolute
/// offsets): a producing task of its own, on the reader's thread, sends the chunks through a
/// ``BoundedChannel`` of two, so at most two chunks wait for the consumer. Releasing the
/// iterator cancels that task: it stops before its next read, or at once if it waits to send.
/// The file stays open while the sequence lives.
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

    /// Whether the range's start is found through indexes, so that only the segments it
    /// overlaps are read; `false` when it is decoded from the start of a member without an
    /// index (gzip's, pigz's, BGZF's, or one that cannot be used).
    package var isIndexed: Bool { reader.isIndexed }

    /// The warnings of the last iteration (an index that did not match, garbage after the last
    /// member); emptied when an iteration starts.
    package var warnings: [StageWarning] { reader.warnings.withLock { $0 } }

    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(reader: reader)
    }

    /// Takes the chunks the producing task sends; starts it with the first ``next()``, and
    /// cancels it when released.
    package struct AsyncIterator: AsyncIteratorProtocol {
        let reader: GzipRangeReader
        var chunks: BoundedChannel<Chunk>.Iterator?
        var production: Production?

        package mutating func next() async throws -> Chunk? {
            if chunks == nil {
                let channel = BoundedChannel<Chunk>(capacity: 2)
                let reader = self.reader
                production = Production(
                    Task(executorPreference: reader.executor) {
                        do {
                            try await reader.produce { chunk in try await channel.send(chunk) }
                            channel.finish()
                        } catch {
                            channel.fail(error)
                        }
                    })
                chunks = channel.makeAsyncIterator()
            }
            return try await chunks!.next()
        }
    }

    /// The producing task of an iteration, cancelled when the last copy of its iterator goes.
    final class Production: Sendable {
        let task: Task<Void, Never>

        init(_ task: Task<Void, Never>) {
            self.task = task
        }

        deinit {
            task.cancel()
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
    /// an access point; the member's trailer is read too and must match the index (ISIZE, and
    /// the CRC-32 its segments make together). A mismatch is reported to `onWarning` and the
    /// member is decoded from its start instead, through its trailer, whose CRC-32 and ISIZE
    /// are then checked: a damaged index never gives bytes `gzip -d` would not give. An index
    /// guards against damage, not forgery: to trust a file made to mislead, decode it whole. Without an index (files of gzip, pigz or `bgzip`),
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
    ///   - onWarning: called with each condition met that did not stop the decoding (an index
    ///     that does not match the segment or the trailer it describes, garbage after the last
    ///     member), on the decoding thread; two iterations at once may call it at once.
    /// - Returns: a sequence of the range's bytes in order, in chunks of 1...`chunkSize` bytes.
    ///   Each iteration decodes anew, at most two chunks ahead of the consumer, on the
    ///   sequence's one thread (its iterations take turns on it) and `threadCount` - 1 more
    ///   for segments; releasing the iterator stops it before its next read. The file stays
    ///   open while the sequence lives.
    /// - Throws: here, ``FileError`` (`open`, `fstat`, `read`; `isDirectory`; `unsupported` for a
    ///   FIFO, a socket or a device, which cannot be read at offsets) and ``GzipError``
    ///   with ``GzipError/Kind/notGzip`` for a file that does not start with a gzip member;
    ///   while iterating, ``FileError`` (`read`) and the ``GzipError``s of ``process(_:emit:)``
    ///   for what it decodes (``GzipError/Kind/truncatedInput`` for a file that ends inside a
    ///   member it decodes, a CRC-32 or ISIZE that does not match in a trailer it reads, zlib's
    ///   errors), and `CancellationError` when the iterating task is cancelled.
    ///
    /// - Precondition: `chunkSize` and `threadCount` above 0; the range starts at 0 or later and
    ///   ends below `Int64.max`.
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
