/// Where a pipeline's chunks end up: a file, a descriptor, a socket, a test's array.
///
/// The writer stage calls ``write(_:)`` for each chunk in order, then exactly one of
/// ``commit()`` (the input ended and every stage succeeded) or ``abort()`` (anything failed or
/// was cancelled). A sink that can be atomic (``FileSink``) makes the destination appear only in
/// ``commit()``; a streaming sink (``DescriptorSink``) cannot take back what it wrote.
///
/// Concurrency contract: one writer calls the methods one at a time; implementations are
/// `Sendable` (typically actors on a ``BlockingIOExecutor``, so their blocking calls stay off
/// the cooperative pool).
public protocol ChunkSink: Sendable {
    /// Writes every byte of `chunk`, after the chunks written before it.
    ///
    /// - Throws: the sink's error (``FileError`` for files); the writer then calls ``abort()``.
    func write(_ chunk: Chunk) async throws

    /// Makes the written data final (and, for a file, durable and visible at its path).
    ///
    /// - Throws: the sink's error; the data is then not committed and ``abort()`` follows.
    func commit() async throws

    /// Discards what was written, if the sink can: removes a temporary file. Idempotent; never
    /// throws.
    func abort() async
}
