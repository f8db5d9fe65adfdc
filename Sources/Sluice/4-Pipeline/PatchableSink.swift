/// Bytes a transform wrote early and knows better at its end: the gzip index that
/// ``ParallelGzipEncoder`` reserves in its header and fills in once every segment is written
/// (`GzipIndex`).
package struct OutputPatch: Sendable, Hashable {
    /// Where the bytes go, from the start of the transform's output.
    package var offset: Int64
    /// The bytes, as long as what they replace.
    package var bytes: [UInt8]

    package init(offset: Int64, bytes: [UInt8]) {
        self.offset = offset
        self.bytes = bytes
    }
}

/// A sink that can write over bytes it was given earlier, before its commit: a file sink
/// writing a temporary file. The pipeline applies a transform's ``TransformSummary/patch``
/// through it once every chunk is written, before the check of the output and the commit; a
/// sink that is not one (a pipe, standard output) keeps the bytes as first written.
package protocol PatchableSink: ChunkSink {
    /// Whether the sink can apply a patch now (a file sink writing a destination in place, a
    /// device, cannot).
    var acceptsPatches: Bool { get async }

    /// Writes `patch.bytes` at `patch.offset` of what the sink was given, leaving the rest.
    ///
    /// - Throws: the sink's write error.
    func apply(_ patch: OutputPatch) async throws
}
