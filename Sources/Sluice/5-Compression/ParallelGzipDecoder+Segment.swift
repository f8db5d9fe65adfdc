import CZlib

extension ParallelGzipDecoder {
    /// What the start of a member says, once enough of it is here.
    enum Header {
        /// At least `needed` more bytes are needed.
        case incomplete(needed: Int)
        /// Not a member this decoder splits: the sequential decoder takes it (and says why not, if
        /// it is not gzip at all).
        case other
        /// A header of `length` bytes, with the index its extra field holds (`GzipIndex`), or
        /// the size of the whole member its BGZF subfield gives (`BC`, BSIZE + 1), and why an
        /// index subfield there holds no index (``GzipIndex/damage(ofSubfield:)``).
        case parsed(length: Int, index: GzipIndex?, memberSize: Int?, indexDamage: String?)

        /// The header's length and its whole member's size when it starts a BGZF member the
        /// decoder batches: a `BC` size that holds the header and a trailer, and no index subfield.
        var bgzfMember: (length: Int, size: Int)? {
            guard case .parsed(let length, nil, let size?, nil) = self, size >= length + 8 else { return nil }
            return (length, size)
        }

        /// Why the header's index cannot be right: its subfield holds no consistent index, or
        /// the index's table cannot be (``GzipIndex/damage``); `nil` otherwise.
        var indexDamage: String? {
            guard case .parsed(_, let index, _, let damage) = self else { return nil }
            return damage ?? index?.damage
        }
    }

    /// The most bytes a header may take before it is left to the sequential decoder.
    static let maximumHeaderLength = 1 << 20

    /// Reads the header at the start of `bytes` (RFC 1952 §2.3.1): ID1 ID2 CM FLG, MTIME, XFL,
    /// OS, then the extra field (whose `SL` and `BC` subfields are looked at), the name and the
    /// comment, as the flags say. A header with a header CRC is left to the sequential decoder.
    ///
    /// - Parameter bytes: the bytes from the member's start (indices from 0: an array, or a
    ///   buffer).
    static func parseHeader<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes) -> Header where Bytes.Index == Int {
        precondition(bytes.startIndex == 0, "a header's bytes are indexed from 0")
        let magic: [UInt8] = [0x1F, 0x8B, 8]
        guard zip(bytes, magic).allSatisfy({ $0 == $1 }) else { return .other }
        guard bytes.count >= 10 else { return .incomplete(needed: 10 - bytes.count) }
        let flags = bytes[3]
        // Reserved flags, or a header CRC (FHCRC), which Sluice and bgzip never write: the
        // sequential decoder checks those.
        guard flags & 0xE2 == 0 else { return .other }
        var position = 10
        var (index, memberSize, indexDamage): (GzipIndex?, Int?, String?) = (nil, nil, nil)
        if flags & 0x04 != 0 {
            guard bytes.count >= 12 else { return .incomplete(needed: 12 - bytes.count) }
            position = 12 + Int(bytes.littleEndian(UInt16.self, at: 10))
            guard bytes.count >= position else { return .incomplete(needed: position - bytes.count) }
            var field = 12
            while field + 4 <= position {
                let length = Int(bytes.littleEndian(UInt16.self, at: field + 2))
                guard field + 4 + length <= position else { break }
                switch (bytes[field], bytes[field + 1]) {
                case (0x53, 0x4C):
                    let subfield = bytes[field + 4..<field + 4 + length]
                    index = GzipIndex(subfield: subfield)
                    if index == nil { indexDamage = GzipIndex.damage(ofSubfield: subfield) }
                case (0x42, 0x43) where length == 2: memberSize = Int(bytes.littleEndian(UInt16.self, at: field + 4)) + 1
                default: break
                }
                field += 4 + length
            }
        }
        for flag: UInt8 in [0x08, 0x10] where flags & flag != 0 {
            guard position < bytes.count, let end = bytes[position...].firstIndex(of: 0) else {
                return bytes.count > maximumHeaderLength ? .other : .incomplete(needed: max(64, bytes.count))
            }
            position = end + 1
        }
        return .parsed(length: position, index: index, memberSize: memberSize, indexDamage: indexDamage)
    }

    /// One piece of the input for a worker: a segment of an indexed member, from its access
    /// point, or a batch of whole BGZF members.
    struct Piece: Sendable {
        /// The compressed bytes: the segment's deflate data, or the members one after another.
        var data: Chunk
        /// The segment's number in its member (a batch: its first member's number in the input).
        var number: Int
        /// The uncompressed bytes and CRC-32 the index lists for a segment; `nil` for members,
        /// whose trailers say them.
        var expected: (count: Int, crc32: UInt32)?
        /// Whether it ends with the member's final block (the last segment, or members).
        var isLast: Bool
        /// BGZF members decoded as one piece, in order: one hand-over to a worker for many
        /// members of at most 64 KiB each.
        var members: [MemberSpan] = []
        /// The most output it may decode to before it fails: what the worker may hold of it.
        var promised: Int

        /// Its compressed bytes.
        var count: Int { data.count }

        /// Segment `number` of a member indexed by `index`, its deflate data `data`: it must
        /// decode to the size and CRC-32 the index lists.
        static func segment(_ number: Int, of index: GzipIndex, data: Chunk) -> Piece {
            let size = Int(index.uncompressedLength(ofSegment: number))
            return Piece(
                data: data, number: number, expected: (size, index.segments[number].crc32),
                isLast: number == index.segments.count - 1, promised: size)
        }
    }

    /// Where one BGZF member lies in a batch's ``Piece/data``.
    struct MemberSpan: Sendable {
        /// Its first byte.
        var start: Int
        /// Its bytes, header and trailer included (BSIZE + 1).
        var size: Int
        /// Its header's length: where its deflate data starts.
        var headerLength: Int
    }

    /// A piece decoded, or why it was not.
    struct Decoded: Sendable {
        var piece: Piece
        /// The output, in chunks of at most the output chunk size; empty when `failure` is set.
        var output: [Chunk]
        var count: Int
        var crc32: UInt32
        /// Why the piece does not decode as its index or its trailer says.
        var failure: String?
        /// The last member's CRC-32 and size, for members (what `gzip -l` lists).
        var lastMember: GzipDecoder.Member?
    }

    /// One worker's inflater: a raw inflate stream, reset for each piece.
    ///
    /// Concurrency: confined to its worker's thread.
    final class Inflater {
        private var stream: ZStream?
        private let outputChunkSize: Int

        init(outputChunkSize: Int) {
            self.outputChunkSize = outputChunkSize
        }

        /// Decodes `piece` and checks it: a segment must use all its bytes, give exactly the
        /// count and CRC-32 its index lists, and end between two blocks after a sync marker
        /// (not in the final block), the last with the final block; a member must end its
        /// deflate data with the final block right before its 8-byte trailer, and match it.
        ///
        /// - Throws: ``GzipError`` when zlib cannot start; ``FileError`` (`ENOMEM`) when memory
        ///   for the output runs out.
        func decode(_ piece: Piece) throws -> Decoded {
            piece.members.isEmpty ? try decodeSegment(piece) : try decodeMembers(of: piece)
        }

        /// The raw inflate stream, reset for the next piece or member.
        private func resetStream() throws(GzipError) -> ZStream {
            if let stream {
                stream.resetForNextMember()
                return stream
            }
            let created = try ZStream(.rawInflate)
            stream = created
            return created
        }

        /// Decodes a batch of BGZF members into shared chunks of the output chunk size (a chunk
        /// of its own per 64 KiB member cost an allocation each, and `malloc` trimmed and faulted
        /// their pages in again), each checked against its trailer: it uses exactly its deflate
        /// data, ends with the final block, and gives the CRC-32 and ISIZE the trailer says.
        private func decodeMembers(of piece: Piece) throws -> Decoded {
            var batch = Decoded(piece: piece, output: [], count: 0, crc32: 0)
            // The batch's CRC-32 over its output chunks: one pass over the bytes costs less than
            // combining the CRC-32s of thousands of tiny members.
            var crc = CRC32()
            var member = MemberDecoding()
            var next = 0
            // The output the trailers promise (each at most 1 MiB + 1, the most a member may make
            // before it fails): a chunk holds no more than is left of it, whatever the chunk size.
            var promised = piece.promised
            while next < piece.members.count || member.isActive {
                var failure: String?
                // Rounded up to a size the chunk pool keeps (a multiple of its smallest).
                let granule = ChunkPool.minimumPooledCapacity
                let capacity = min(outputChunkSize, (max(promised, 1) + granule - 1) / granule * granule)
                let chunk = try Chunk(allocating: capacity) { (buffer) throws(GzipError) -> Int in
                    var filled = 0
                    while filled < buffer.count {
                        if !member.isActive {
                            guard next < piece.members.count else { break }
                            member = try MemberDecoding(piece.members[next], of: piece.data, stream: resetStream())
                            next += 1
                        }
                        filled += member.inflate(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                        guard !member.isActive else { continue }
                        if let reason = member.failure {
                            failure = reason
                            break
                        }
                        batch.lastMember = GzipDecoder.Member(crc32: member.crc.value, size: Int64(member.produced))
                    }
                    batch.count += filled
                    return filled
                }
                if let failure { return failed(piece, failure) }
                promised -= chunk.count
                if chunk.count > 0 {
                    chunk.withUnsafeBytes { crc.update($0) }
                    batch.output.append(chunk)
                }
            }
            batch.crc32 = crc.value
            return batch
        }

        /// Decodes a segment of an indexed member into chunks of its own (it is megabytes).
        private func decodeSegment(_ piece: Piece) throws -> Decoded {
            guard let expected = piece.expected else { preconditionFailure("a BGZF member goes in a batch") }
            let stream = try resetStream()
            let (end, limit) = (piece.data.count, expected.count)
            var output: [Chunk] = []
            var (produced, consumed, code, crc) = (0, 0, Z_OK, CRC32())
            // Where the last call that made progress left the stream (a call that makes none
            // moves zlib on from "between blocks", so it is read after each call that does).
            var isBetweenBlocks = false
            try piece.data.withUnsafeBytes { (bytes) throws(FileError) in
                let input = UnsafeRawBufferPointer(rebasing: bytes[..<end])
                // One byte of room past the count: more output than listed is a mismatch.
                while code == Z_OK && produced <= limit {
                    let room = min(outputChunkSize, limit + 1 - produced)
                    let chunk = try Chunk(allocating: room) { buffer in
                        var filled = 0
                        while filled < buffer.count && code == Z_OK {
                            let step = stream.inflate(
                                UnsafeRawBufferPointer(rebasing: input[consumed...]), into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                            (consumed, filled, code) = (consumed + step.consumed, filled + step.produced, step.code)
                            if step.produced == 0 && step.consumed == 0 { break }
                            isBetweenBlocks = stream.isBetweenBlocks
                        }
                        return filled
                    }
                    if chunk.count == 0 { break }
                    chunk.withUnsafeBytes { crc.update($0) }
                    produced += chunk.count
                    output.append(chunk)
                }
            }
            let decoded = Decoded(piece: piece, output: output, count: produced, crc32: crc.value)
            let isLast = piece.isLast
            if code != Z_OK && code != Z_STREAM_END && code != Z_BUF_ERROR { return failed(piece, "invalid compressed data") }
            guard consumed == end else { return failed(piece, "its data does not end where its length says") }
            guard (code == Z_STREAM_END) == isLast, isLast || isBetweenBlocks else {
                return failed(piece, isLast ? "it does not end with the final block" : "it does not end at an access point")
            }
            guard produced == limit else { return failed(piece, "it decodes to \(produced) bytes, not \(limit)") }
            guard crc.value == expected.crc32 else { return failed(piece, "its CRC-32 does not match") }
            return decoded
        }

        private func failed(_ piece: Piece, _ reason: String) -> Decoded {
            Decoded(piece: piece, output: [], count: 0, crc32: 0, failure: reason)
        }

        /// One BGZF member of a batch being inflated, into as many output buffers as it takes.
        struct MemberDecoding {
            private var stream: ZStream?
            private var data = Chunk([])
            private var (start, end, limit, consumed) = (0, 0, 0, 0)
            private(set) var produced = 0
            private(set) var crc = CRC32()
            private var code = Z_OK
            /// Why the member does not decode as its trailer says, once it ended.
            private(set) var failure: String?

            init() {}

            /// The largest ISIZE decoded: a BGZF member holds at most 64 KiB, and a larger size
            /// is no reason to allocate it.
            static let maximumSize = 1 << 20

            /// The most output a member whose trailer's ISIZE is `size` may make before it fails:
            /// its ISIZE and one byte more, at most ``maximumSize`` + 1.
            static func promisedSize(isize size: UInt32) -> Int {
                min(Int(size), maximumSize) + 1
            }

            /// Starts the member at `span` of `data` on `stream` (reset): its deflate data lies
            /// between its header and its 8-byte trailer, whose ISIZE bounds its output.
            ///
            /// - Precondition: the span holds its header and a trailer.
            init(_ span: MemberSpan, of data: Chunk, stream: ZStream) {
                precondition(span.size >= span.headerLength + 8, "a member too short for its header and trailer")
                (self.stream, self.data) = (stream, data)
                (start, end) = (span.start + span.headerLength, span.start + span.size - 8)
                limit = Int(data.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: end + 4, as: UInt32.self)) })
                if limit > Self.maximumSize { (self.stream, failure) = (nil, "the member's size is not that of a BGZF block") }
            }

            /// Whether the member has more to inflate.
            var isActive: Bool { stream != nil }

            /// Inflates into `buffer`, at most one byte past the member's size (more output than
            /// listed is a mismatch); checks the member once it ends.
            ///
            /// - Returns: the bytes written at the front of `buffer`.
            mutating func inflate(into buffer: UnsafeMutableRawBufferPointer) -> Int {
                guard let stream else { return 0 }
                var filled = 0
                let room = min(buffer.count, limit + 1 - produced)
                data.withUnsafeBytes { bytes in
                    let input = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
                    while filled < room && code == Z_OK {
                        let step = stream.inflate(
                            UnsafeRawBufferPointer(rebasing: input[consumed...]),
                            into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<room]))
                        (consumed, filled, code) = (consumed + step.consumed, filled + step.produced, step.code)
                        if step.produced == 0 && step.consumed == 0 { break }
                    }
                }
                crc.update(UnsafeRawBufferPointer(rebasing: buffer[..<filled]))
                produced += filled
                if code == Z_OK && filled == room && room < buffer.count { code = Z_BUF_ERROR }  // past the size
                if code == Z_OK && filled == buffer.count { return filled }  // the buffer is full: more later
                self.stream = nil
                failure = check()
                return filled
            }

            /// Why the ended member does not match its trailer, or `nil`.
            private func check() -> String? {
                if code != Z_STREAM_END && code != Z_BUF_ERROR && code != Z_OK { return "invalid compressed data" }
                guard consumed == end - start else { return "its data does not end where its length says" }
                guard code == Z_STREAM_END else { return "it does not end with the final block" }
                guard produced == limit else { return "it decodes to \(produced) bytes, not \(limit)" }
                let expected = data.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: end, as: UInt32.self)) }
                return crc.value == expected ? nil : "its CRC-32 does not match"
            }
        }
    }
}
