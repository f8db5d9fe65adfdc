/// A ``ChunkSink`` whose written data can be read back before it is committed: what a copy's
/// verification (`--verify`) needs.
///
/// The writer stage has written every chunk, and neither ``ChunkSink/commit()`` nor
/// ``ChunkSink/abort()`` has been called yet. ``openForReadBack()`` then makes the data durable,
/// drops it from the page cache and opens it for reading, so that what is read is what the
/// device holds, not the pages the writes left in memory. The commit (or the abort) follows as
/// usual: a verification that finds a difference aborts, and nothing is committed.
///
/// Concurrency contract: as ``ChunkSink``: one caller, between the last write and the commit.
package protocol ReadBackSink: ChunkSink {
    /// The path the data is committed to, which messages about it name.
    var destination: Pathname { get }

    /// Makes what was written durable (`fsync(2)`, unless the sink was asked not to sync), drops
    /// its cached pages (`posix_fadvise(2)` with `POSIX_FADV_DONTNEED`) and opens it for
    /// reading from its first byte.
    ///
    /// May be called more than once: each call opens the data again, from its first byte.
    ///
    /// - Returns: a descriptor open for reading, which the caller closes; `nil` when the data
    ///   cannot be read back (a device or FIFO written in place).
    /// - Throws: the sink's error (``FileError``: the `fsync`, or the `open` of the data).
    func openForReadBack() async throws -> Descriptor?
}
