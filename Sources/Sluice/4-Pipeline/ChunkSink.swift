/// Where a pipeline's chunks end up: a file, a descriptor, a socket, a test's array.
///
/// The writer stage calls ``write(contentsOf:)`` (or ``write(_:)``) for the chunks in order,
/// then exactly one of
/// ``commit()`` (the input ended and every stage succeeded) or ``abort()`` (anything failed or
/// was cancelled). A sink that can be atomic (``FileSink``) makes the destination appear only in
/// ``commit()``; a streaming sink (``DescriptorSink``) cannot take back what it wrote.
///
/// A chunk may be a hole (``Chunk/isHole``): its bytes read as zeros, so a sink that only
/// writes bytes needs nothing more; a sink that can skip a range (``FileSink``: `lseek(2)`) may
/// make a hole of it instead. Either way the data that follows lands after it. A hole from a
/// ``Copier`` may be longer than the chunk size (up to 64 MiB): it holds no memory, so a sink
/// that copies its bytes into a buffer of its own copies them a piece at a time.
///
/// Concurrency contract: one writer calls the methods one at a time; implementations are
/// `Sendable` (typically actors on a thread of their own, a `TaskExecutor`, so their blocking
/// calls stay off the cooperative pool).
public protocol ChunkSink: Sendable {
    /// Writes every byte of `chunk`, after the chunks written before it.
    ///
    /// - Throws: the sink's error (``FileError`` for files); the writer then calls ``abort()``.
    func write(_ chunk: Chunk) async throws

    /// Writes every byte of `chunks`, in order, after the chunks written before them.
    ///
    /// A pipeline hands its writer every chunk that is ready at once, so that a sink can write
    /// them with one system call (`writev(2)`). The default calls ``write(_:)`` for each.
    ///
    /// - Throws: the sink's error (``FileError`` for files); the writer then calls ``abort()``.
    func write(contentsOf chunks: [Chunk]) async throws

    /// The executor the writer stage runs on, or `nil` for any.
    ///
    /// A sink that is an actor on a thread of its own returns that thread's `TaskExecutor`: the writer
    /// stage then runs on the sink's own thread, and each call to the sink costs no thread
    /// hand-off. The default is `nil`.
    var preferredExecutor: (any TaskExecutor)? { get }

    /// Makes the written data final (and, for a file, durable and visible at its path).
    ///
    /// - Throws: the sink's error; the data is then not committed and ``abort()`` follows.
    func commit() async throws

    /// Discards what was written, if the sink can: removes a temporary file. Idempotent; never
    /// throws.
    func abort() async
}

extension ChunkSink {
    /// Calls ``write(_:)`` for each chunk, in order.
    ///
    /// - Throws: the first error of ``write(_:)``; the chunks after it are not written.
    public func write(contentsOf chunks: [Chunk]) async throws {
        for chunk in chunks { try await write(chunk) }
    }

    /// `nil`: the writer stage runs on any executor.
    public var preferredExecutor: (any TaskExecutor)? { nil }
}
