/// A ``ChunkTransform`` whose output a copy can check before committing it (`--verify`,
/// ``PipelineOptions/verifiesOutput``): it says how its output reads back.
///
/// A copy that verifies asks its transform, once the transform has finished, for its
/// ``verification``, and reads the output back as that says: through the decoder it gives for an
/// encoder, as it is for a decoder. What is read back must have the CRC-32 (ISO 3309, as in
/// RFC 1952 §8) of the transform's ``TransformSummary/crc32`` and its size: so the transform's
/// summary must carry the CRC-32 of its decoded side, its input when it encodes, its output when
/// it decodes. A transform that does not conform, or reports no CRC-32, has its output committed
/// unverified, and the copy's report says why (``CopyReport/VerificationOutcome/notVerified(reason:)``).
///
/// Sluice's codecs conform: ``ParallelGzipEncoder`` (read back through a ``GzipDecoder``, which
/// also checks each member's CRC-32 and ISIZE, RFC 1952 §2.3.1) and ``GzipDecoder``. A codec of
/// your own conforms the same way, and needs nothing else for `--verify`:
/// ```swift
/// extension MyEncoder: VerifiableTransform {
///     var verification: TransformVerification { .encodesInput(decoder: { MyDecoder() }) }
/// }
/// extension MyDecoder: VerifiableTransform {
///     var verification: TransformVerification { .decodesInput }
/// }
/// ```
///
/// Concurrency contract: as ``ChunkTransform``'s; ``verification`` is read once, in the
/// transform's stage, after ``ChunkTransform/finish(emit:)``.
public protocol VerifiableTransform: ChunkTransform {
    /// How a copy reads this transform's output back to check it.
    var verification: TransformVerification { get }
}

/// How a copy checks the output of a ``VerifiableTransform``: whether the transform encodes or
/// decodes, and for an encoder the transform that decodes its output.
///
/// Either way a match costs one read of the output (decoded for an encoder); only a mismatch
/// reads the source again, beside the output, to find the first byte that differs, in the
/// decoded data.
public enum TransformVerification: Sendable {
    /// The transform encodes its input (a compression): its output, read back through a
    /// transform `decoder` makes, must give the input's CRC-32 and size (bytes read). A decoder
    /// that throws fails the check (``VerificationError/Kind/undecodable(_:)``, its error as the
    /// cause). `decoder` is called on the verification's thread, once per pass over the output.
    case encodesInput(decoder: @Sendable () throws -> any ChunkTransform)
    /// The transform decodes its input (a decompression): its output, read back as it is, must
    /// have the CRC-32 the transform reported and the size written. A mismatch decodes the
    /// source again, by a new transform of the copy's own factory, to find the first difference.
    case decodesInput
}
