/// What a transform reports when its input ends, for a caller that writes its own
/// ``ChunkTransform``: the CRC-32 it computed (or `nil`) and the warnings the copy's report carries.
public struct TransformSummary: Sendable, Equatable {
    /// The CRC-32 (ISO 3309, as in RFC 1952 §8) of the uncompressed data the transform saw or
    /// produced, when it computed one; `nil` lets the pipeline compute it itself.
    public var crc32: UInt32?
    /// Conditions that did not stop the operation but that the user should hear about.
    public var warnings: [StageWarning]
    /// Bytes of the output to write again before the commit, where the sink can
    /// (``PatchableSink``): the index of an indexed gzip member.
    package var patch: OutputPatch?

    /// Creates a summary.
    public init(crc32: UInt32? = nil, warnings: [StageWarning] = []) {
        self.crc32 = crc32
        self.warnings = warnings
    }
}
