/// A sink that copies a range of a source (``Chunk/sourceRange``) itself, inside the kernel: a
/// clone or `copy_file_range(2)` (``FileSink``). A pipeline hands it such chunks as they come;
/// any other sink gets their bytes, which the pipeline reads for it.
package protocol SourceRangeSink: ChunkSink {
    /// Writes `chunks` in order, as ``ChunkSink/write(contentsOf:)`` does, and copies each range
    /// of a source by the method it names, calling `copied` with the bytes of each call that
    /// copied some (so a range that fails half-way has counted what it copied; a range to the
    /// end of file counts those it found).
    ///
    /// - Throws: ``KernelCopyRefusal`` when the kernel refuses a range (the copy takes another
    ///   path); the sink's errors otherwise.
    func writeCopyingRanges(_ chunks: [Chunk], copied: @Sendable (Int64) -> Void) async throws
}

/// The kernel refused to copy a range of a source here ("not here": `EXDEV`, `EOPNOTSUPP` and
/// the like, ``ErrorNumber/meansNotSupportedHere``, or a `copy_file_range(2)` that copied nothing
/// before the range's end): the copy empties its destination and takes the next path.
package struct KernelCopyRefusal: Error, Sendable, Equatable {
    /// What was refused: ``Chunk/SourceRange/Method/clone`` or
    /// ``Chunk/SourceRange/Method/kernelCopy``.
    package let method: Chunk.SourceRange.Method
    /// The kernel's answer; `nil` for a copy of nothing.
    package let errno: ErrorNumber?

    package init(method: Chunk.SourceRange.Method, errno: ErrorNumber?) {
        self.method = method
        self.errno = errno
    }
}
