import CZlib

/// A ``ChunkTransform`` that decodes gzip data on several threads where the data says how to
/// split it, and as ``GzipDecoder`` does everywhere else.
///
/// - A member Sluice indexed (<doc:IndexedGzip>): its segments, cut by the index's compressed
///   lengths, are decoded at once by an ``OrderedParallelStage``, each from its access point
///   with a raw inflate. A segment is accepted only if it uses exactly its bytes, decodes to the
///   count and CRC-32 the index lists, and ends between two blocks, not in the final block (the
///   last: with the final block). Any mismatch is a ``StageWarning`` naming the segment, and the
///   member goes on on one thread from the end of the last good segment, with its 32 KiB of
///   history. The trailer's CRC-32 and ISIZE are always checked. So a damaged or forged index
///   never gives output that `gzip -d` would not give.
/// - BGZF members (`bgzip`: each member's size in its `BC` subfield): decoded at once, each
///   checked against its own trailer.
/// - Anything else (a member of gzip or pigz, garbage after the last member, a truncated
///   member): from there on by a ``GzipDecoder``, with its errors and warnings.
///
/// Memory is bounded by the thread count and the segment size (at most `maximumInFlight`
/// segments' compressed and decoded bytes), not by the input; an index whose segments are over
/// ``maximumSegmentSize`` is not used.
///
/// Concurrency: not `Sendable`; confined to one stage, which calls ``process(_:emit:)`` per
/// input chunk and then ``finish(emit:)`` once. The inflating runs on the workers' threads.
package final class ParallelGzipDecoder: ChunkTransform {
    /// The largest segment decoded in parallel: 64 MiB (an index for more than 512 GiB).
    package static let maximumSegmentSize: Int64 = 64 << 20

    /// The compressed bytes of a piece are copied into a buffer of a multiple of 256 KiB: the
    /// chunk pool reuses those (a buffer of each piece's own size would fill the pool with
    /// buffers never used again: 75 MiB peak resident memory against 25 for one thread).
    static let bufferGranule = 256 << 10

    let outputChunkSize: Int
    let outputLimit: Int64?
    let stage: OrderedParallelStage<Piece, Decoded>

    /// Where the decoder stands in its input.
    enum Phase {
        /// At a member's start: `pending` holds the bytes of its header seen so far.
        case header
        /// In an indexed member: gathering the bytes of segment `number`.
        case segments(GzipIndex, number: Int)
        /// After an indexed member's last segment: gathering its trailer into `pending`.
        case trailer
        /// Gathering a BGZF member of `size` bytes, its header (`headerLength` bytes) first.
        case member(size: Int, headerLength: Int)
        /// After a mismatch: the rest of the member by one raw inflate.
        case continuation(ZStream)
        /// From here on, all by a ``GzipDecoder``.
        case sequential(GzipDecoder)
    }

    var phase = Phase.header
    var pending: [UInt8] = []
    var gathered = ChunkAccumulator(size: 1)
    /// Compressed bytes taken so far (before `pending` and `gathered`): error offsets.
    var consumedInput: Int64 = 0
    /// Members decoded to their end, and the one being decoded: its output, CRC-32 and the
    /// last 32 KiB of it (the history a continuation needs).
    var membersDecoded = 0
    var memberOutput: Int64 = 0
    var memberCRC32: UInt32 = 0
    var history: [Chunk] = []
    var lastMember: GzipDecoder.Member?
    var totalOutput: Int64 = 0
    var crc32: UInt32 = 0
    var warnings: [StageWarning] = []
    /// Told of each warning as it is met (``warn(_:)``), for a caller that must print it
    /// even if the decoding fails afterwards, when no summary comes.
    let onWarning: @Sendable (StageWarning) -> Void
    var bgzfMembers = 0
    /// Pieces submitted and not yet taken back, and the output they promise (the segments' sizes).
    var inFlight = 0
    var promisedInFlight = 0
    /// The pieces in flight on `threadCount` workers: one more than the workers, so one waits
    /// while all inflate. Twice the workers was 4 % slower on 256 MiB of text at `-p 2` (0.218
    /// s against 0.210 s, medians of 7): more output buffers, colder in the caches.
    static func maximumInFlight(threadCount: Int) -> Int { threadCount + 1 }
    /// The most output the pieces in flight may promise: 32 MiB.
    static let maximumPromisedBytes = 32 << 20
    /// BGZF members gathered and not yet handed to a worker (``submitBatch(emit:)``).
    var batch: [Piece] = []
    var batchBytes = 0
    /// While a piece is being submitted: bytes a fallback took that come after that piece.
    var isSubmitting = false
    var heldBack: [Chunk] = []
    /// Counts the pieces that failed their checks (``fallBack(from:reason:emit:)``).
    var fallBacks = 0

    /// Whether the decoder stands between two members.
    var isAtMemberStart: Bool {
        if case .header = phase { return true }
        return false
    }

    /// Creates a decoder and starts its threads.
    ///
    /// - Parameters:
    ///   - threadCount: the threads that inflate (>= 1).
    ///   - outputChunkSize: the largest output chunk in bytes (> 0).
    ///   - outputLimit: the most bytes the output may hold over all members, or `nil`.
    ///   - onWarning: called with each warning as it is met, on the decoding stage's thread;
    ///     the summary carries them all as well, but a decoding that fails gives no summary.
    package init(
        threadCount: Int, outputChunkSize: Int = 1 << 20, outputLimit: Int64? = nil,
        onWarning: @escaping @Sendable (StageWarning) -> Void = { _ in }
    ) {
        precondition(threadCount >= 1 && outputChunkSize > 0 && (outputLimit ?? 0) >= 0, "invalid decoder parameters")
        self.outputChunkSize = outputChunkSize
        self.outputLimit = outputLimit
        self.onWarning = onWarning
        stage = OrderedParallelStage(
            workerCount: threadCount, maximumInFlight: Self.maximumInFlight(threadCount: threadCount), label: "sluice.inflate",
            makeWorker: {
                let inflater = Inflater(outputChunkSize: outputChunkSize)
                return { piece in try inflater.decode(piece) }
            })
    }

    package func process(_ chunk: Chunk, emit: (Chunk) async throws -> Void) async throws {
        do {
            try await consume(chunk, from: 0, emit: emit)
        } catch {
            await stage.close()
            throw error
        }
    }

    package func finish(emit: (Chunk) async throws -> Void) async throws -> TransformSummary {
        do {
            try await drain(emit: emit)
            switch phase {
            case .segments, .member:
                // The input ended inside a piece the index or a BGZF header promised: what is
                // there is decoded on one thread, which decides whether it is complete.
                try await fallBack(from: nil, reason: "the input ends before it", emit: emit)
            default:
                break
            }
            if case .sequential = phase {
            } else if isAtMemberStart {
                // Whatever is left is no complete member: the sequential decoder says what it
                // is (padding, garbage, a truncated member) as it would.
                try await takeOver(emit: emit)
            } else {
                throw GzipError(.truncatedInput, offset: consumedInput + Int64(pending.count + gathered.count))
            }
            guard case .sequential(let decoder) = phase else { preconditionFailure("no sequential decoder") }
            await stage.close()
            var summary = try await decoder.finish(emit: emit)
            summary.warnings = warnings + summary.warnings
            return summary
        } catch {
            await stage.close()
            throw error
        }
    }

    /// Records a warning for the summary and tells ``onWarning`` of it.
    func warn(_ warning: StageWarning) {
        warnings.append(warning)
        onWarning(warning)
    }

    /// Takes `chunk` from `offset` on, phase by phase.
    func consume(_ chunk: Chunk, from offset: Int, emit: (Chunk) async throws -> Void) async throws {
        var offset = offset
        while offset < chunk.count {
            switch phase {
            case .sequential(let decoder):
                let rest = offset == 0 ? chunk : chunk.withUnsafeBytes { Chunk($0[offset...]) }
                try await decoder.process(rest, emit: emit)
                return
            case .header:
                guard case .incomplete(let needed) = Self.parseHeader(pending) else {
                    try await startMember(emit: emit)
                    continue
                }
                let taken = min(chunk.count - offset, needed)
                chunk.withUnsafeBytes { pending += $0[offset..<offset + taken] }
                offset += taken
                try await startMember(emit: emit)
            case .segments(let index, let number):
                offset = gathered.fill(from: chunk, at: offset)
                if gathered.isFull { try await submitSegment(index, number, emit: emit) }
            case .member(_, let headerLength):
                offset = gathered.fill(from: chunk, at: offset)
                if gathered.isFull { try await submitMember(headerLength: headerLength, emit: emit) }
            case .trailer:
                let taken = min(chunk.count - offset, 8 - pending.count)
                chunk.withUnsafeBytes { pending += $0[offset..<offset + taken] }
                offset += taken
                if pending.count == 8 { try await endIndexedMember(emit: emit) }
            case .continuation(let stream):
                offset = try await `continue`(stream, chunk, from: offset, emit: emit)
            }
        }
    }

    /// At a member's start, once its header is here: an indexed member's segments, a BGZF
    /// member, or the sequential decoder for the rest.
    private func startMember(emit: (Chunk) async throws -> Void) async throws {
        switch Self.parseHeader(pending) {
        case .incomplete:
            return
        case .parsed(let length, let index?, _) where index.isUsable:
            if inFlight > 0 || !batch.isEmpty {
                // The BGZF members before it are written out first (the member's own counts
                // start at 0); a failure among them takes this member on too.
                try await drain(emit: emit)
                guard isAtMemberStart, !pending.isEmpty else { return }
            }
            consumedInput += Int64(length)
            pending = []
            (memberOutput, memberCRC32, history) = (0, 0, [])
            phase = .segments(index, number: 0)
            gathered = ChunkAccumulator(size: Int(index.segments[0].compressedLength))
        case .parsed(let length, _, let size?) where size >= length + 8:
            // The header is the member's first bytes: gathered with the rest.
            let header = Chunk(pending)
            pending = []
            phase = .member(size: size, headerLength: length)
            gathered = ChunkAccumulator(size: size)
            _ = gathered.fill(from: header, at: 0)
        default:
            try await drain(emit: emit)
            // A piece that failed while draining may have handed the rest over already.
            if isAtMemberStart { try await takeOver(emit: emit) }
        }
    }

    /// A segment's bytes are here: hands it to a worker, and the next segment (or the trailer)
    /// begins.
    private func submitSegment(_ index: GzipIndex, _ number: Int, emit: (Chunk) async throws -> Void) async throws {
        let data = gathered.take(granule: Self.bufferGranule)
        let isLast = number == index.segments.count - 1
        let piece = Piece(
            data: data, number: number, expected: (Int(index.uncompressedLength(ofSegment: number)), index.segments[number].crc32),
            isLast: isLast)
        if isLast {
            phase = .trailer
        } else {
            phase = .segments(index, number: number + 1)
            gathered = ChunkAccumulator(size: Int(index.segments[number + 1].compressedLength))
        }
        try await submit(piece, emit: emit)
    }

    /// A BGZF member's bytes are here: hands it to a worker; the next member begins.
    private func submitMember(headerLength length: Int, emit: (Chunk) async throws -> Void) async throws {
        let data = gathered.take(granule: Self.bufferGranule)
        phase = .header
        bgzfMembers += 1
        let member = Piece(data: data, number: bgzfMembers, expected: nil, isLast: true, headerLength: length)
        batch.append(member)
        batchBytes += data.count
        // Members go to the workers some at a time: one hand-over per 256 KiB of input.
        if batchBytes >= Self.batchBytes { try await submitBatch(emit: emit) }
    }

    /// BGZF members gathered and not yet handed to a worker, and their compressed bytes.
    static let batchBytes = 256 << 10

    /// Hands the BGZF members gathered to a worker as one piece.
    func submitBatch(emit: (Chunk) async throws -> Void) async throws {
        guard !batch.isEmpty else { return }
        let members = batch
        (batch, batchBytes) = ([], 0)
        try await submit(Piece(data: Chunk([]), number: members[0].number, expected: nil, isLast: true, members: members), emit: emit)
    }

    /// Submits `piece`, first writing out every piece already decoded and, while the stage is
    /// full, waiting for the oldest.
    private func submit(_ piece: Piece, emit: (Chunk) async throws -> Void) async throws {
        let fallBacks = self.fallBacks
        isSubmitting = true
        defer { isSubmitting = false }
        while let decoded = try stage.nextIfReady() {
            inFlight -= 1
            try await write(decoded, emit: emit)
        }
        // At most `maximumInFlight` pieces, and at most 32 MiB of their promised output: an
        // index's segment size is the file's word, not a bound.
        let promised = piece.expected?.count ?? Self.batchBytes
        while stage.isFull || (inFlight > 0 && promisedInFlight + promised > Self.maximumPromisedBytes) {
            guard let decoded = try await stage.next() else { preconditionFailure("a full stage ended") }
            inFlight -= 1
            try await write(decoded, emit: emit)
        }
        if self.fallBacks != fallBacks {
            // A piece written out just now failed: what comes after it (this piece, then the
            // bytes gathered since) goes on on one thread, whatever phase that has reached.
            isSubmitting = false
            for chunk in piece.chunks { try await consume(chunk, from: 0, emit: emit) }
            let held = heldBack
            heldBack = []
            for chunk in held { try await consume(chunk, from: 0, emit: emit) }
        } else {
            try await stage.submit(piece)
            inFlight += 1
            promisedInFlight += promised
        }
    }

    /// Writes out every piece in flight, in order.
    func drain(emit: (Chunk) async throws -> Void) async throws {
        try await submitBatch(emit: emit)
        while inFlight > 0, let decoded = try await stage.next() {
            inFlight -= 1
            try await write(decoded, emit: emit)
        }
    }

    /// The sequential decoder, from here on, given what is pending first.
    @discardableResult
    func takeOver(emit: (Chunk) async throws -> Void) async throws -> GzipDecoder {
        let decoder = GzipDecoder(outputChunkSize: outputChunkSize, outputLimit: outputLimit, allocator: nil)
        decoder.resume(afterMembers: membersDecoded, input: consumedInput, output: totalOutput, crc32: crc32, lastMember: lastMember)
        phase = .sequential(decoder)
        if !pending.isEmpty {
            let rest = Chunk(pending)
            pending = []
            try await decoder.process(rest, emit: emit)
        }
        return decoder
    }
}
