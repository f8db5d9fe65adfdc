import CZlib

/// A ``ChunkTransform`` that compresses its input into one gzip member (RFC 1952) with zlib, as
/// one deflate stream: the package's own (its tests and benchmarks); a library user compresses
/// with ``ParallelGzipEncoder``, on one thread or several.
///
/// The member's header carries no file name and an MTIME of 0 (RFC 1952 §2.3.1), so equal
/// input at an equal level always gives equal bytes, as `gzip -n` does; XFL and OS are what
/// zlib writes (OS 3, Unix). Empty input gives a valid 20-byte member. Output leaves in chunks
/// of exactly `outputChunkSize` bytes, except the last, and each is awaited through `emit`
/// before more is compressed, so the encoder holds at most one output chunk plus zlib's own
/// state (about 256 KiB at memory level 8). It runs on one core: ``ParallelGzipEncoder``
/// compresses on several, in `pigz`'s block format.
///
/// ```swift
/// let encoder = try GzipEncoder(level: .default)
/// for try await chunk in source { try await encoder.process(chunk) { try await channel.send($0) } }
/// let summary = try await encoder.finish { try await channel.send($0) }
/// ```
///
/// Concurrency: not `Sendable`; confined to one stage, which calls ``process(_:emit:)`` per
/// input chunk and then ``finish(emit:)`` once, never concurrently. Each call compresses in
/// synchronous steps of at most one output chunk between suspensions at `emit` (CPU work: give it
/// to a ``Pipeline`` as its transform, which runs it on a thread of its own). Cancellation is observed
/// through `emit`, whose error is propagated unchanged.
package final class GzipEncoder: ChunkTransform {
    /// The compression level the member is written with.
    package let level: CompressionLevel

    /// The largest output chunk in bytes; every chunk but the last has exactly this size.
    package let outputChunkSize: Int

    private let stream: ZStream
    private let output: OutputChunkBuffer
    private var isFinished = false

    /// Creates an encoder that starts a new gzip member.
    ///
    /// - Parameters:
    ///   - level: the deflate level, 1...9; `.default` (6) as `gzip`.
    ///   - outputChunkSize: the largest output chunk in bytes; must be > 0. Default 1 MiB.
    /// - Throws: ``GzipError`` of kind ``GzipError/Kind/zlib(code:)`` when zlib cannot allocate
    ///   its state (`Z_MEM_ERROR`) or is an incompatible version.
    package convenience init(level: CompressionLevel = .default, outputChunkSize: Int = 1 << 20) throws(GzipError) {
        try self.init(level: level, outputChunkSize: outputChunkSize, allocator: nil)
    }

    init(level: CompressionLevel, outputChunkSize: Int, allocator: ZStream.Allocator?) throws(GzipError) {
        precondition(outputChunkSize > 0, "outputChunkSize must be > 0")
        self.level = level
        self.outputChunkSize = outputChunkSize
        stream = try ZStream(.deflate(level), allocator: allocator)
        output = OutputChunkBuffer(capacity: outputChunkSize)
    }

    /// Compresses one input chunk, emitting every output chunk that fills up.
    ///
    /// Compressed bytes that do not yet fill a chunk are kept for the next call or for
    /// ``finish(emit:)``.
    ///
    /// - Parameters:
    ///   - chunk: the next uncompressed bytes (may be empty).
    ///   - emit: receives each full output chunk; suspends under backpressure.
    /// - Throws: ``FileError`` (`ENOMEM`) when memory for the output runs out; what `emit` throws
    ///   (deflate cannot fail on any input).
    /// - Precondition: ``finish(emit:)`` has not been called.
    package func process(_ chunk: Chunk, emit: (Chunk) async throws -> Void) async throws {
        precondition(!isFinished, "GzipEncoder.process called after finish")
        try output.allocate()
        var position = 0
        while position < chunk.count {
            let step = chunk.withUnsafeBytes { input in
                stream.deflate(UnsafeRawBufferPointer(rebasing: input[position...]), into: output.freeSpace, flush: Z_NO_FLUSH)
            }
            precondition(step.code == Z_OK || step.code == Z_BUF_ERROR, "deflate failed with \(step.code)")
            precondition(step.consumed > 0 || step.produced > 0 || output.isFull, "deflate made no progress")
            position += step.consumed
            output.commit(step.produced)
            if output.isFull {
                try await emit(try output.take())
            }
        }
    }

    /// Ends the member: emits the rest of the compressed data and the 8-byte trailer
    /// (CRC-32 and ISIZE, RFC 1952 §2.3.1), then frees zlib's state.
    ///
    /// - Parameter emit: receives each remaining output chunk.
    /// - Returns: a summary whose `crc32` is the CRC-32 of all uncompressed input (the value
    ///   stored in the trailer); no warnings.
    /// - Throws: ``FileError`` (`ENOMEM`) when memory for the output runs out; what `emit` throws.
    /// - Precondition: called once.
    package func finish(emit: (Chunk) async throws -> Void) async throws -> TransformSummary {
        precondition(!isFinished, "GzipEncoder.finish called twice")
        isFinished = true
        try output.allocate()
        while true {
            let step = stream.deflate(UnsafeRawBufferPointer(start: nil, count: 0), into: output.freeSpace, flush: Z_FINISH)
            output.commit(step.produced)
            if step.code == Z_STREAM_END { break }
            precondition(step.code == Z_OK || step.code == Z_BUF_ERROR, "deflate failed with \(step.code)")
            precondition(step.produced > 0 || output.isFull, "deflate made no progress")
            if output.isFull {
                try await emit(try output.take())
            }
        }
        let crc32 = stream.checkValue
        stream.end()
        if !output.isEmpty {
            try await emit(try output.take())
        }
        return TransformSummary(crc32: crc32)
    }
}

extension GzipEncoder: TakesLongHoles, VerifiableTransform {
    /// As ``ParallelGzipEncoder``'s: read back through a ``GzipDecoder``.
    package var verification: TransformVerification {
        .encodesInput { [outputChunkSize] in GzipDecoder(outputChunkSize: outputChunkSize) }
    }
}
