import CZlib

extension ParallelGzipDecoder {
    /// Writes out a decoded piece, or, if it failed its checks, goes on from it on one thread.
    func write(_ decoded: Decoded, emit: (Chunk) async throws -> Void) async throws {
        promisedInFlight -= decoded.piece.promised
        if let failure = decoded.failure { return try await fallBack(from: decoded, reason: failure, emit: emit) }
        for chunk in decoded.output { try await emitOutput(chunk, emit: emit) }
        crc32 = CRC32.combine(crc32, decoded.crc32, secondLength: Int64(decoded.count))
        consumedInput += Int64(decoded.piece.count)
        if decoded.piece.expected == nil {
            membersDecoded += decoded.piece.members.count
            lastMember = decoded.lastMember
        } else {
            memberCRC32 = CRC32.combine(memberCRC32, decoded.crc32, secondLength: Int64(decoded.count))
        }
    }

    /// Emits one output chunk within the output limit, and keeps the last 32 KiB of the member's
    /// output for a continuation.
    func emitOutput(_ chunk: Chunk, emit: (Chunk) async throws -> Void) async throws {
        if let outputLimit, totalOutput + Int64(chunk.count) > outputLimit {
            throw GzipError(.outputLimitExceeded(limit: outputLimit), offset: consumedInput)
        }
        try await emit(chunk)
        totalOutput += Int64(chunk.count)
        memberOutput += Int64(chunk.count)
        history.append(chunk)
        while let first = history.first, history.reduce(0, { $0 + $1.count }) - first.count >= Self.historySize {
            history.removeFirst()
        }
    }

    /// The history a raw inflate refers back to: deflate's window.
    static var historySize: Int { 32 << 10 }

    /// After a piece failed its checks: a segment is named in a warning and its member goes on
    /// from the end of the last good segment, on one thread, with its history; a BGZF member
    /// goes to the sequential decoder with everything after it (which fails as `gzip -d` does
    /// if the member is damaged). The pieces in flight after it, and the bytes gathered since,
    /// are given to the one that goes on, in order.
    func fallBack(from failed: Decoded?, reason: String, emit: (Chunk) async throws -> Void) async throws {
        fallBacks += 1
        var rest = failed.map { [$0.piece.data] } ?? []
        while inFlight > 0, let decoded = try await stage.next() {
            inFlight -= 1
            promisedInFlight -= decoded.piece.promised
            rest.append(decoded.piece.data)
        }
        var partial: Chunk?
        switch phase {
        case .segments, .member:
            let taken = try gathered.take()
            if taken.count > 0 { partial = taken }
        default:
            break
        }
        let trailer = pending
        pending = []
        let segment: Int? = if case .segments(_, let number) = phase { number } else { nil }
        if let number = failed.map({ $0.piece.expected == nil ? nil : $0.piece.number }) ?? segment {
            warn(StageWarning(
                "member \(membersDecoded + 1), segment \(number + 1) does not match its index (\(reason)): "
                    + "decoded on one thread from there"))
            let stream = try ZStream(.rawInflate)
            var window: [UInt8] = []
            for chunk in history { window += chunk.bytes }
            window.suffix(Self.historySize).withUnsafeBytes { stream.setInflateDictionary($0) }
            phase = .continuation(stream)
        } else {
            try await takeOver(emit: emit)
        }
        for chunk in rest { try await consume(chunk, from: 0, emit: emit) }
        // Bytes gathered since come after the piece being submitted, if any: it feeds them.
        var after = partial.map { [$0] } ?? []
        if !trailer.isEmpty { after.append(Chunk(trailer)) }
        if isSubmitting {
            heldBack += after
        } else {
            for chunk in after { try await consume(chunk, from: 0, emit: emit) }
        }
    }

    /// The trailer of an indexed member is here: once every segment is written out, checks its
    /// CRC-32 and ISIZE (RFC 1952 §2.3.1) and the next member begins.
    func endIndexedMember(emit: (Chunk) async throws -> Void) async throws {
        try await drain(emit: emit)
        // A segment that failed took the member on: it ended it already.
        guard case .trailer = phase, pending.count == 8 else { return }
        let expected = pending.littleEndian(UInt32.self, at: 0)
        let size = pending.littleEndian(UInt32.self, at: 4)
        guard expected == memberCRC32 else {
            throw GzipError(.crc32Mismatch(expected: expected, actual: memberCRC32), offset: consumedInput)
        }
        guard size == UInt32(truncatingIfNeeded: memberOutput) else {
            throw GzipError(.sizeMismatch(expected: size, actual: UInt32(truncatingIfNeeded: memberOutput)), offset: consumedInput + 4)
        }
        membersDecoded += 1
        lastMember = GzipDecoder.Member(crc32: memberCRC32, size: memberOutput)
        consumedInput += 8
        pending = []
        phase = .header
    }

    /// Inflates `chunk` from `offset` on as the rest of a member after a mismatch, emitting the
    /// output; at the end of its deflate data, the trailer follows.
    ///
    /// - Returns: the offset of the first byte not taken.
    func `continue`(_ stream: ZStream, _ chunk: Chunk, from offset: Int, emit: (Chunk) async throws -> Void) async throws -> Int {
        var position = offset
        while true {
            let start = position
            var code = Z_OK
            var crc = CRC32()
            let output = try Chunk(allocating: outputChunkSize) { buffer in
                var filled = 0
                chunk.withUnsafeBytes { input in
                    while filled < buffer.count && code == Z_OK {
                        let step = stream.inflate(
                            UnsafeRawBufferPointer(rebasing: input[position...]), into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                        position += step.consumed
                        filled += step.produced
                        code = step.code
                        if step.consumed == 0 && step.produced == 0 { break }
                    }
                }
                crc.update(UnsafeRawBufferPointer(rebasing: buffer[..<filled]))
                return filled
            }
            consumedInput += Int64(position - start)
            if output.count > 0 {
                memberCRC32 = CRC32.combine(memberCRC32, crc.value, secondLength: Int64(output.count))
                crc32 = CRC32.combine(crc32, crc.value, secondLength: Int64(output.count))
                try await emitOutput(output, emit: emit)
            }
            switch code {
            case Z_STREAM_END:
                phase = .trailer
                return position
            case Z_OK where output.count == outputChunkSize:
                continue
            case Z_OK, Z_BUF_ERROR:
                return position
            default:
                throw GzipError(.corruptData, offset: consumedInput, zlibMessage: stream.message)
            }
        }
    }
}
