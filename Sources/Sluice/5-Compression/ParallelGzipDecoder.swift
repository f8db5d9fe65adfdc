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

    /// The compressed bytes of a segment are copied into a buffer of a multiple of 256 KiB (a
    /// batch's, of 64 KiB, the pool's smallest): the chunk pool reuses those (a buffer of each piece's own size would fill the pool with
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
    /// Pieces submitted and not yet taken back, and the output they promise (a segment's size, a
    /// batch's ISIZEs).
    var inFlight = 0
    var promisedInFlight = 0
    /// The pieces in flight on `threadCount` workers: one more than the workers, so one waits
    /// while all inflate. Twice the workers was 4 % slower on 256 MiB of text at `-p 2` (0.218
    /// s against 0.210 s, medians of 7): more output buffers, colder in the caches.
    static func maximumInFlight(threadCount: Int) -> Int { threadCount + 1 }
    /// The most output the pieces in flight may promise: 32 MiB.
    static let maximumPromisedBytes = 32 << 20
    /// BGZF members gathered and not yet handed to a worker (``submitBatch(emit:)``): their
    /// bytes (references to the input's chunks, copied once into one chunk when handed over),
    /// where each lies in them, and the output their trailers promise. So a batch's memory is
    /// its bytes, however many members they hold.
    var batch = ChunkAccumulator(size: batchBytes + maximumMemberSize)
    var batchMembers: [MemberSpan] = []
    var batchPromised = 0
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
            case .header, .member:
                if gatherBGZFMembers(from: chunk, at: &offset) {
                    try await submitBatch(emit: emit)
                } else if case .header = phase, offset < chunk.count || !pending.isEmpty {
                    try await startMember(Self.parseHeader(pending), emit: emit)
                }
            case .segments(let index, let number):
                offset = gathered.fill(from: chunk, at: offset)
                if gathered.isFull { try await submitSegment(index, number, emit: emit) }
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

    /// Takes BGZF members from `chunk` at `offset` without suspending (each suspension costs a
    /// hop to an executor: they took a fifth of the time of a file of tiny members). Stops at
    /// the chunk's end, at a header that is no BGZF member's (left in `pending` for
    /// ``startMember(_:emit:)``), or when the batch is ready to hand over: then returns true.
    private func gatherBGZFMembers(from chunk: Chunk, at offset: inout Int) -> Bool {
        while offset < chunk.count {
            switch phase {
            case .header:
                if pending.isEmpty, takeWholeBGZFMembers(from: chunk, at: &offset) { return true }
                guard offset < chunk.count else { return false }
                // A member that straddles the chunk's end, or a header that is not BGZF's.
                var header = Self.parseHeader(pending)
                if case .incomplete(let needed) = header {
                    let taken = min(chunk.count - offset, needed)
                    chunk.withUnsafeBytes { pending += $0[offset..<offset + taken] }
                    offset += taken
                    header = Self.parseHeader(pending)
                    if case .incomplete = header { continue }
                    if case .parsed(let length, _, _, _) = header, pending.count > length {
                        // The header ended inside what was just taken (a name or a comment is
                        // looked for 64 bytes at a time): the rest is the member's, not the header's.
                        offset -= pending.count - length
                        pending.removeLast(pending.count - length)
                    }
                }
                guard startBGZFMember(header) else { return false }
            case .member(_, let headerLength):
                offset = gathered.fill(from: chunk, at: offset)
                if gathered.isFull, endBGZFMember(headerLength: headerLength) { return true }
            default:
                return false
            }
        }
        return false
    }

    /// Adds the BGZF members that lie whole in `chunk` from `offset` on to the batch, reading
    /// their headers where they are, and returns whether the batch is ready to hand over. Stops
    /// at a member that ends past the chunk, or at a header that is no BGZF member's.
    private func takeWholeBGZFMembers(from chunk: Chunk, at offset: inout Int) -> Bool {
        let start = offset
        var (end, isReady) = (offset, false)
        chunk.withUnsafeBytes { bytes in
            while !isReady {
                let rest = UnsafeRawBufferPointer(rebasing: bytes[end...])
                guard let (length, size) = Self.parseHeader(rest).bgzfMember, size <= rest.count else { break }
                bgzfMembers += 1
                batchMembers.append(MemberSpan(start: batch.count + end - start, size: size, headerLength: length))
                batchPromised += Inflater.MemberDecoding.promisedSize(isize: rest.littleEndian(UInt32.self, at: size - 4))
                end += size
                isReady = batch.count + end - start >= Self.batchBytes || batchPromised >= Self.maximumBatchOutput
            }
        }
        offset = batch.fill(from: chunk, at: start, upTo: end)
        return isReady
    }

    /// At a member's start, once its `header` is here: gathers a BGZF member and returns true,
    /// or returns false for any other header.
    private func startBGZFMember(_ header: Header) -> Bool {
        guard let (length, size) = header.bgzfMember else { return false }
        // The header is the member's first bytes: gathered with the rest.
        let bytes = Chunk(pending)
        pending = []
        phase = .member(size: size, headerLength: length)
        gathered = ChunkAccumulator(size: size)
        _ = gathered.fill(from: bytes, at: 0)
        return true
    }

    /// At a member's start, once its `header` is here: an indexed member's segments, or the
    /// sequential decoder for the rest (a BGZF member: ``startBGZFMember(_:)``).
    private func startMember(_ header: Header, emit: (Chunk) async throws -> Void) async throws {
        switch header {
        case .incomplete:
            return
        case .parsed(let length, let index?, _, _) where index.isUsable:
            if inFlight > 0 || !batchMembers.isEmpty {
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
        default:
            try await drain(emit: emit)
            // A piece that failed while draining may have handed the rest over already.
            guard isAtMemberStart else { return }
            if let damage = header.indexDamage {
                warn(StageWarning("member \(membersDecoded + 1): its index does not match its data (\(damage)): decoded on one thread"))
            }
            try await takeOver(emit: emit)
        }
    }

    /// A segment's bytes are here: hands it to a worker, and the next segment (or the trailer)
    /// begins.
    private func submitSegment(_ index: GzipIndex, _ number: Int, emit: (Chunk) async throws -> Void) async throws {
        let piece = Piece.segment(number, of: index, data: try gathered.take(granule: Self.bufferGranule))
        if piece.isLast {
            phase = .trailer
        } else {
            phase = .segments(index, number: number + 1)
            gathered = ChunkAccumulator(size: Int(index.segments[number + 1].compressedLength))
        }
        try await submit(piece, emit: emit)
    }

    /// A BGZF member's bytes are here: it joins the batch and the next member begins. Returns
    /// whether the batch is ready to hand over (``submitBatch(emit:)``).
    private func endBGZFMember(headerLength length: Int) -> Bool {
        phase = .header
        bgzfMembers += 1
        let isize = gathered.suffix(4).littleEndian(UInt32.self, at: 0)
        batchMembers.append(MemberSpan(start: batch.count, size: gathered.count, headerLength: length))
        batch.append(&gathered)
        batchPromised += Inflater.MemberDecoding.promisedSize(isize: isize)
        // Members go to the workers some at a time: one hand-over per 256 KiB of input or 4 MiB
        // of promised output, whichever comes first.
        return batch.count >= Self.batchBytes || batchPromised >= Self.maximumBatchOutput
    }

    /// The compressed bytes of BGZF members that make a batch.
    static let batchBytes = 256 << 10
    /// The output a batch's trailers may promise before it is handed over.
    static let maximumBatchOutput = 4 << 20
    /// The largest BGZF member: BSIZE + 1, with BSIZE a 16-bit field.
    static let maximumMemberSize = 1 << 16

    /// Hands the BGZF members gathered to a worker as one piece.
    func submitBatch(emit: (Chunk) async throws -> Void) async throws {
        guard !batchMembers.isEmpty else { return }
        let (members, promised) = (batchMembers, batchPromised)
        let data = try batch.take(granule: ChunkPool.minimumPooledCapacity)
        (batchMembers, batchPromised) = ([], 0)
        let piece = Piece(
            data: data, number: bgzfMembers - members.count + 1, expected: nil, isLast: true, members: members, promised: promised)
        try await submit(piece, emit: emit)
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
        let promised = piece.promised
        while stage.isFull || (inFlight > 0 && promisedInFlight + promised > Self.maximumPromisedBytes) {
            guard let decoded = try await stage.next() else { preconditionFailure("a full stage ended") }
            inFlight -= 1
            try await write(decoded, emit: emit)
        }
        if self.fallBacks != fallBacks {
            // A piece written out just now failed: what comes after it (this piece, then the
            // bytes gathered since) goes on on one thread, whatever phase that has reached.
            isSubmitting = false
            try await consume(piece.data, from: 0, emit: emit)
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

extension ParallelGzipDecoder: TakesLongHoles, VerifiableTransform {
    /// As ``GzipDecoder``'s: its output is its input decoded.
    package var verification: TransformVerification { .decodesInput }
}
