import CZlib

/// A ``ChunkTransform`` that decompresses gzip data (RFC 1952) with zlib.
///
/// The input may hold several members one after another (as `cat a.gz b.gz` makes); their
/// outputs are concatenated. Each member's CRC-32 and ISIZE (its size modulo 2^32) are
/// verified, and header fields FEXTRA, FNAME, FCOMMENT and FHCRC are accepted and checked but
/// never used (RFC 1952 §2.3.1). After the last complete member, NUL padding is ignored
/// silently; any other bytes are ignored with one ``StageWarning`` in the summary, as `gzip -d`
/// does, except bytes that begin a new member (`1f`, `1f 8b`, …) and end before it is complete,
/// which are a truncated member. Only gzip is accepted: zlib streams (RFC 1950) and raw deflate
/// are not in gzip format.
///
/// Output is bounded: the decoder inflates into one chunk of at most `outputChunkSize`
/// bytes and awaits `emit` before it inflates more, so a member that expands a thousandfold
/// (a decompression bomb) costs no more memory than any other. Each call to
/// ``process(_:emit:)`` emits everything its input decodes to, so output is never held back
/// waiting for later input.
///
/// ```swift
/// let decoder = GzipDecoder(outputLimit: 1 << 30)
/// for try await chunk in source { try await decoder.process(chunk) { try await sink.write($0) } }
/// let summary = try await decoder.finish { try await sink.write($0) }
/// for warning in summary.warnings { print("warning:", warning) }
/// ```
///
/// Concurrency: not `Sendable`; confined to one stage, which calls ``process(_:emit:)`` per
/// input chunk and then ``finish(emit:)`` once, never concurrently. Each call inflates in
/// synchronous steps of at most one output chunk between suspensions at `emit` (CPU work: give it
/// to a ``Pipeline`` as its transform, which runs it on a thread of its own). Cancellation is observed
/// through `emit`, whose error is propagated unchanged. After an error, every later call
/// throws the same error.
public final class GzipDecoder: ChunkTransform {
    /// The largest output chunk in bytes.
    package let outputChunkSize: Int

    /// The most decoded bytes the decoder produces over all members, or `nil` for no limit.
    package let outputLimit: Int64?

    /// A member decoded to its end, its trailer checked (RFC 1952 §2.3.1).
    package struct Member: Sendable, Hashable {
        /// The CRC-32 of its data, as its trailer stores it.
        package var crc32: UInt32
        /// The bytes its data decoded to: exact, where the trailer's ISIZE is this modulo 2^32.
        package var size: Int64
    }

    /// The members decoded to their end so far.
    package private(set) var membersDecoded = 0

    /// The last member decoded to its end, `nil` before the first (what `gzip -l` lists: the
    /// last member's CRC-32 and size).
    package private(set) var lastMember: Member?

    /// Where the decoder stands in its input.
    private enum Phase {
        /// At the start of a member (or of the input); `probe` holds the 0–2 bytes seen of it.
        case expectingMember
        /// zlib is decoding a member; `probe` holds header bytes not yet handed to zlib.
        case decoding
        /// After the last member, only NUL bytes so far.
        case skippingPadding
        /// After the last member, bytes that are not a member: ignored, warning recorded.
        case ignoringGarbage
    }

    private let allocator: ZStream.Allocator?
    private var stream: ZStream?
    private var phase = Phase.expectingMember
    /// The first bytes of a member, held back until they show it is gzip with method 8.
    private var probe: [UInt8] = []
    /// Compressed bytes handed to zlib or skipped so far (excludes `probe`).
    private var consumedInput: Int64 = 0
    private var memberStart: Int64 = 0
    /// The last 8 bytes handed to zlib, the newest in the most significant byte.
    private var recentInput: UInt64 = 0
    private var memberOutput: Int64 = 0
    private var totalOutput: Int64 = 0
    private var crc32: UInt32 = 0
    private var warnings: [StageWarning] = []
    private var failure: (any Error)?
    private var isFinished = false

    /// Creates a decoder.
    ///
    /// zlib's state (about 40 KiB with its window) is allocated with the first input, so creating a
    /// decoder cannot fail; an allocation failure is thrown by the first call that decodes.
    ///
    /// - Parameters:
    ///   - outputChunkSize: the largest output chunk in bytes; must be > 0. Default 1 MiB.
    ///   - outputLimit: the most bytes the decoded output may hold over all members, or `nil`
    ///     (default) for no limit; must be >= 0. Output of exactly the limit is accepted.
    public convenience init(outputChunkSize: Int = 1 << 20, outputLimit: Int64? = nil) {
        self.init(outputChunkSize: outputChunkSize, outputLimit: outputLimit, allocator: nil)
    }

    init(outputChunkSize: Int, outputLimit: Int64?, allocator: ZStream.Allocator?) {
        precondition(outputChunkSize > 0, "outputChunkSize must be > 0")
        precondition((outputLimit ?? 0) >= 0, "outputLimit must be >= 0")
        self.outputChunkSize = outputChunkSize
        self.outputLimit = outputLimit
        self.allocator = allocator
    }

    /// Makes a new decoder take over an input after `members` members another decoder decoded
    /// (``ParallelGzipDecoder``): their `input` bytes, `output` bytes and combined CRC-32, so
    /// that offsets in errors and warnings, the output limit and the summary's CRC-32 cover the
    /// whole input. Call it before the first ``process(_:emit:)``.
    func resume(afterMembers members: Int, input: Int64, output: Int64, crc32: UInt32, lastMember: Member?) {
        membersDecoded = members
        consumedInput = input
        memberStart = input
        totalOutput = output
        self.crc32 = crc32
        self.lastMember = lastMember
    }

    /// Decodes one chunk of compressed input and emits all the output it yields.
    ///
    /// - Parameters:
    ///   - chunk: the next compressed bytes (may be empty; members may span chunks).
    ///   - emit: receives each output chunk (1...`outputChunkSize` bytes); suspends under
    ///     backpressure.
    /// - Throws: ``GzipError``: ``GzipError/Kind/notGzip`` when the input does not start with
    ///   `1f 8b`; ``GzipError/Kind/unknownMethod(_:)`` for a method other than 8;
    ///   ``GzipError/Kind/headerCRCMismatch``; ``GzipError/Kind/corruptData`` for invalid
    ///   deflate data or header flags; ``GzipError/Kind/crc32Mismatch(expected:actual:)`` and
    ///   ``GzipError/Kind/sizeMismatch(expected:actual:)`` for a member whose trailer does not
    ///   match its data; ``GzipError/Kind/outputLimitExceeded(limit:)`` when the output would
    ///   pass `outputLimit`; ``GzipError/Kind/zlib(code:)`` when zlib runs out of memory.
    ///   ``FileError`` (`ENOMEM`) when memory for an output chunk cannot be had. Also whatever
    ///   `emit` throws, unchanged. Before a failure in the data is thrown, the bytes decoded
    ///   before it was found are emitted (as `gzip -dc` writes them).
    /// - Precondition: ``finish(emit:)`` has not been called.
    public func process(_ chunk: Chunk, emit: (Chunk) async throws -> Void) async throws {
        precondition(!isFinished, "GzipDecoder.process called after finish")
        if let failure { throw failure }
        try await decode(chunk, emit: emit)
    }

    /// Ends the input, checking that it ended after a complete member.
    ///
    /// - Parameter emit: receives any output still held by zlib (normally none).
    /// - Returns: a summary whose `crc32` is the CRC-32 of all decoded output over all members,
    ///   and whose `warnings` holds one warning if bytes other than NUL padding followed the
    ///   last member.
    /// - Throws: ``GzipError/Kind/truncatedInput`` when the input was empty or ended inside a
    ///   member (in its header, its data, before or inside its trailer, or after the first
    ///   bytes of a new member); an error an earlier call threw; whatever `emit` throws.
    /// - Precondition: called once.
    public func finish(emit: (Chunk) async throws -> Void) async throws -> TransformSummary {
        precondition(!isFinished, "GzipDecoder.finish called twice")
        isFinished = true
        defer { stream?.end() }
        if let failure { throw failure }
        try await decode(Chunk([]), emit: emit)
        switch phase {
        case .expectingMember where probe.isEmpty && membersDecoded > 0, .skippingPadding, .ignoringGarbage:
            return TransformSummary(crc32: crc32, warnings: warnings)
        case .expectingMember, .decoding:
            let error = GzipError(.truncatedInput, offset: consumedInput + Int64(probe.count))
            failure = error
            throw error
        }
    }

    // MARK: - Decoding

    /// Fills output chunks from `chunk` and emits them until the input is used up and zlib
    /// holds no more output.
    private func decode(_ chunk: Chunk, emit: (Chunk) async throws -> Void) async throws {
        var position = 0
        while true {
            // The bytes decoded before a failure are emitted before it is thrown (as `gzip -dc`
            // writes them): a chunk may hold the end of a good member and the start of a bad one.
            var error: GzipError?
            let output: Chunk
            do {
                output = try Chunk(allocating: outputChunkSize) { buffer in
                    var produced = 0
                    do throws(GzipError) {
                        try chunk.withUnsafeBytes { (input) throws(GzipError) in
                            try fill(buffer, from: input, position: &position, produced: &produced)
                        }
                    } catch let caught {
                        error = caught
                    }
                    return produced
                }
            } catch let outOfMemory {
                failure = outOfMemory
                throw outOfMemory
            }
            let isFull = output.count == outputChunkSize
            if output.count > 0 {
                // A chunk keeps its allocation: copy a small one so that its memory matches its count.
                try await emit(output.count >= outputChunkSize / 2 ? output : Chunk(Array(output.bytes[...])))
            }
            if let error {
                failure = error
                throw error
            }
            if !isFull { return }
        }
    }

    /// Advances through `input` from `position`, inflating into `output` and counting the bytes
    /// written in `produced`, also when it throws (they are good output). Stops with
    /// `produced < output.count` only when the input is used up and zlib holds no pending output.
    private func fill(
        _ output: UnsafeMutableRawBufferPointer,
        from input: UnsafeRawBufferPointer,
        position: inout Int,
        produced: inout Int
    ) throws(GzipError) {
        while produced < output.count {
            switch phase {
            case .ignoringGarbage:
                consumedInput += Int64(input.count - position)
                position = input.count
                return

            case .skippingPadding:
                while position < input.count && input[position] == 0 {
                    position += 1
                    consumedInput += 1
                }
                guard position < input.count else { return }
                ignoreTrailingGarbage(from: consumedInput)

            case .expectingMember:
                while probe.count < 3 && position < input.count && phase == .expectingMember {
                    if try examine(input[position]) { position += 1 }
                }
                if phase == .expectingMember && probe.count < 3 { return }

            case .decoding:
                let needsInput = try inflateStep(
                    into: UnsafeMutableRawBufferPointer(rebasing: output[produced...]), from: input, position: &position,
                    produced: &produced)
                if needsInput { return }
            }
        }
    }

    /// One call of zlib's `inflate` in the member being decoded, from the bytes of its start
    /// kept in `probe`, else from `input` at `position`: adds the bytes it wrote to `output` to
    /// `produced` (before it throws, those within the output limit: a failure found at a
    /// member's trailer comes after all of its data) and returns whether it needs more input to
    /// go on (it made no progress).
    private func inflateStep(
        into output: UnsafeMutableRawBufferPointer, from input: UnsafeRawBufferPointer, position: inout Int,
        produced: inout Int
    ) throws(GzipError) -> Bool {
        let step: ZStream.Step
        let inputExhausted: Bool
        let stream = try activeStream()
        if probe.isEmpty {
            let rest = UnsafeRawBufferPointer(rebasing: input[position...])
            step = stream.inflate(rest, into: output)
            remember(UnsafeRawBufferPointer(rebasing: rest[..<step.consumed]))
            position += step.consumed
            inputExhausted = position == input.count
        } else {
            step = probe.withUnsafeBytes { header in stream.inflate(header, into: output) }
            probe.withUnsafeBytes { remember(UnsafeRawBufferPointer(rebasing: $0[..<step.consumed])) }
            probe.removeFirst(step.consumed)
            inputExhausted = false
        }
        consumedInput += Int64(step.consumed)
        memberOutput &+= Int64(step.produced)
        totalOutput &+= Int64(step.produced)
        if let outputLimit, totalOutput > outputLimit {
            produced += step.produced - Int(totalOutput - outputLimit)
            throw GzipError(.outputLimitExceeded(limit: outputLimit), offset: consumedInput)
        }
        produced += step.produced
        switch step.code {
        case Z_OK, Z_BUF_ERROR:
            if step.consumed == 0 && step.produced == 0 {
                // No progress: zlib needs more input (it always has room for output here).
                precondition(inputExhausted, "inflate made no progress with input and output available")
                return true
            }
        case Z_STREAM_END:
            endMember(stream)
        default:
            throw error(for: step.code, stream: stream)
        }
        return false
    }

    /// Looks at the next byte of a member's start (RFC 1952 §2.3.1: ID1, ID2, CM) and returns
    /// whether it joined `probe`; a byte that did not is left for the phase it switched to.
    private func examine(_ byte: UInt8) throws(GzipError) -> Bool {
        let isFirstMember = membersDecoded == 0
        switch probe.count {
        case 0 where !isFirstMember && byte == 0:
            phase = .skippingPadding
            return false
        case 0 where byte != 0x1F, 1 where byte != 0x8B:
            guard !isFirstMember else {
                throw GzipError(.notGzip, offset: memberStart)
            }
            let start = consumedInput
            consumedInput += Int64(probe.count)
            probe.removeAll()
            ignoreTrailingGarbage(from: start)
            return false
        case 2 where byte != UInt8(Z_DEFLATED):
            throw GzipError(.unknownMethod(byte), offset: memberStart + 2)
        default:
            break
        }
        probe.append(byte)
        if probe.count == 3 {
            phase = .decoding
        }
        return true
    }

    /// Records the one warning for bytes after the last member that are neither NUL padding nor
    /// a member, starting at byte `offset`; ignores everything from there on.
    private func ignoreTrailingGarbage(from offset: Int64) {
        warnings.append(StageWarning("decompression OK, trailing garbage ignored (from byte \(offset))"))
        phase = .ignoringGarbage
    }

    private func endMember(_ stream: ZStream) {
        crc32 = CRC32.combine(crc32, stream.checkValue, secondLength: memberOutput)
        lastMember = Member(crc32: stream.checkValue, size: memberOutput)
        membersDecoded += 1
        memberOutput = 0
        memberStart = consumedInput
        stream.resetForNextMember()
        phase = .expectingMember
    }

    private func activeStream() throws(GzipError) -> ZStream {
        if let stream { return stream }
        let created = try ZStream(.inflate, allocator: allocator)
        stream = created
        return created
    }

    /// Keeps the last 8 bytes handed to zlib, so a trailer that does not match can be reported
    /// with its stored values.
    private func remember(_ bytes: UnsafeRawBufferPointer) {
        for byte in bytes.suffix(8) {
            recentInput = (recentInput >> 8) | (UInt64(byte) << 56)
        }
    }

    /// Maps a zlib failure to a ``GzipError``. zlib tells its data errors apart only by message.
    private func error(for code: Int32, stream: ZStream) -> GzipError {
        let message = stream.message
        guard code == Z_DATA_ERROR else {
            if code == Z_NEED_DICT { return GzipError(.corruptData, offset: consumedInput, zlibMessage: "needs a dictionary") }
            return GzipError(.zlib(code: code), offset: consumedInput, zlibMessage: message)
        }
        // The stored CRC-32 or ISIZE is the last 4 bytes zlib consumed (little-endian).
        let lastField = UInt32(truncatingIfNeeded: recentInput >> 32)
        switch message {
        case "incorrect header check":
            return GzipError(.notGzip, offset: memberStart, zlibMessage: message)
        case "header crc mismatch":
            return GzipError(.headerCRCMismatch, offset: consumedInput - 2, zlibMessage: message)
        case "incorrect data check":
            return GzipError(
                .crc32Mismatch(expected: lastField, actual: stream.checkValue),
                offset: consumedInput - 4, zlibMessage: message)
        case "incorrect length check":
            return GzipError(
                .sizeMismatch(expected: lastField, actual: UInt32(truncatingIfNeeded: memberOutput)),
                offset: consumedInput - 4, zlibMessage: message)
        default:
            return GzipError(.corruptData, offset: consumedInput, zlibMessage: message)
        }
    }
}

extension GzipDecoder: TakesLongHoles, VerifiableTransform {
    /// Its summary's CRC-32 is its output's, checked against each member's trailer (RFC 1952
    /// §2.3.1).
    public var verification: TransformVerification { .decodesInput }
}
