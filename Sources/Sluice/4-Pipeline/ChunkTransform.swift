/// A stage that turns a stream of chunks into another stream of chunks (gzip, gunzip, ...).
///
/// The pipeline calls ``process(_:emit:)`` once per input chunk, in order, then
/// ``finish(emit:)`` once at the end of the input. Each output chunk is handed to `emit`, which
/// suspends while the next stage's buffer is full: a transform that awaits every `emit` before
/// producing more output keeps memory bounded however much output one input chunk expands to
/// (a decompression bomb). An output chunk should hold at most the transform's documented
/// output chunk size.
///
/// A hole (``Chunk/isHole``: zeros a sparse source has no blocks for) reaches a transform as a
/// chunk like any other, whose bytes read as zeros and take no memory, at most the chunk size
/// long (a pipeline splits a longer one before the transform): a transform that makes a chunk
/// of the same length from it holds no more than it would for data, so the pipeline's memory
/// bound holds whatever the holes. Its output is data (a transform's output chunks are never
/// holes unless it makes them with ``Chunk/hole(count:)``).
///
/// Concurrency contract: a transform is confined to one stage (one task); it is not `Sendable`
/// and its methods are never called concurrently. The pipeline runs the stage on a dedicated
/// thread (zlib calls on large buffers are blocking work), so its methods may block for the
/// duration of one bounded step.
public protocol ChunkTransform {
    /// Consumes one input chunk and emits zero or more output chunks.
    ///
    /// - Parameters:
    ///   - chunk: the next input chunk (may be empty).
    ///   - emit: hands one output chunk to the next stage; suspends under backpressure; throws
    ///     when the pipeline stops (propagate that error unchanged).
    /// - Throws: the transform's own typed error for bad input, or what `emit` threw.
    mutating func process(_ chunk: Chunk, emit: (Chunk) async throws -> Void) async throws

    /// Ends the input: emits the remaining output and checks that the input was complete.
    ///
    /// - Parameter emit: as in ``process(_:emit:)``.
    /// - Returns: what the transform knows of the data it handled (CRC-32, warnings).
    /// - Throws: the transform's own typed error (for example a truncated input), or what
    ///   `emit` threw.
    mutating func finish(emit: (Chunk) async throws -> Void) async throws -> TransformSummary
}

/// A transform that reads a hole of any length in place, as zeros, and never holds data of its
/// length (Sluice's codecs: they take their input a block at a time). A pipeline hands it the
/// reader's hole chunks whole (up to 64 MiB), and any other transform in pieces of at most the
/// chunk size.
package protocol TakesLongHoles: ChunkTransform {}

/// Makes a transform stage's state (`{ ParallelGzipEncoder() }`), inside that stage, once per
/// run of a ``Pipeline`` or job of a ``Copier``; called again, on the verification's thread, to
/// decode the source anew where a verification of a decoder looks for the first difference
/// (``TransformVerification/decodesInput``). It may throw to refuse its settings.
public typealias TransformFactory = @Sendable () throws -> any ChunkTransform
