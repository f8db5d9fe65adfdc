/// The index Sluice writes into the header of a gzip member it compresses from a file: where
/// each segment of the member's deflate data starts, so that a decoder can split the member
/// and decode its segments at once, or start at one (<doc:IndexedGzip>).
///
/// A segment is `segmentSize` bytes of uncompressed input (the last may be shorter), and its
/// deflate data starts at an *access point*: a block that no earlier data primes (no history,
/// as after zlib's `Z_FULL_FLUSH`), at a byte boundary after the previous segment's sync marker
/// (`00 00 ff ff`). A raw inflate (`inflateInit2` with -15 window bits, no dictionary) can start
/// there.
///
/// The index is one `FEXTRA` subfield (RFC 1952 §2.3.1.1) with the ID ``subfieldID`` (`S`,
/// `L`), little-endian:
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 1 | version: 1 |
/// | 1 | 1 | flags: bit 0 set when the table is filled in; clear in a subfield reserved and left unused |
/// | 2 | 8 | `segmentSize`: uncompressed bytes per segment |
/// | 10 | 8 | the member's uncompressed size |
/// | 18 | 4 | `n`: the count of segments |
/// | 22 | 8 `n` | per segment: its compressed length (4 bytes), the CRC-32 of its uncompressed bytes (4 bytes) |
///
/// The rest of the subfield, if any, is zero. The first segment starts right after the header;
/// the lengths add up to the member's deflate data, after which come its CRC-32 and ISIZE.
///
/// Concurrency contract: an immutable `Sendable` value.
package struct GzipIndex: Sendable, Hashable {
    /// One segment: its compressed length and the CRC-32 of its uncompressed bytes.
    package struct Segment: Sendable, Hashable {
        package var compressedLength: UInt32
        package var crc32: UInt32

        package init(compressedLength: UInt32, crc32: UInt32) {
            self.compressedLength = compressedLength
            self.crc32 = crc32
        }
    }

    /// The subfield's ID, `SI1` `SI2`: `S` `L`.
    package static let subfieldID: (UInt8, UInt8) = (0x53, 0x4C)
    /// The format's version.
    package static let version: UInt8 = 1
    /// The bytes before the table.
    package static let fixedLength = 22
    /// The bytes of one segment's entry.
    package static let entryLength = 8
    /// The most bytes one subfield holds (its `LEN` is 16 bits, RFC 1952 §2.3.1.1), less the
    /// `FEXTRA` field's own 2-byte `XLEN` and the subfield's 4 bytes, which must fit in `XLEN` too.
    package static let maximumSubfieldLength = 65_535 - 4
    /// The most segments one index lists: 8,188.
    package static let maximumSegments = (maximumSubfieldLength - fixedLength) / entryLength

    /// The smallest segment: 2 MiB of input (rounded up to a multiple of the block size; see
    /// ``segmentSize(inputSize:blockSize:)``). Chosen by measuring what an access point costs
    /// (the 32 KiB of history the block after it does not have) against `--no-index`, at level
    /// 6 with 256 KiB blocks: on 60 MiB of web-log lines, 1 MiB segments cost 0.33 % of the
    /// output, 2 MiB 0.16 %, 4 MiB 0.08 %; on 64 MiB of such lines with a third of their bytes
    /// in random 4 KiB blocks, 0.083 %, 0.039 % and 0.019 %. Two MiB keeps within 0.3 % of
    /// `--no-index` while a 256 MiB file still has 128 segments to share among the cores, and
    /// a decoder's memory (a few segments per worker) stays small.
    package static let baseSegmentSize: Int64 = 2 << 20

    /// Uncompressed bytes per segment (the last may hold fewer).
    package var segmentSize: Int64
    /// The member's uncompressed size.
    package var totalSize: Int64
    /// The segments, in order.
    package var segments: [Segment]

    package init(segmentSize: Int64, totalSize: Int64, segments: [Segment]) {
        self.segmentSize = segmentSize
        self.totalSize = totalSize
        self.segments = segments
    }

    /// The uncompressed bytes between two access points for an input of `inputSize` bytes
    /// (`nil`: not known) compressed in blocks of `blockSize`: ``baseSegmentSize`` rounded up to
    /// a multiple of the block size, doubled until the index of a known size fits one subfield.
    /// A function of these two alone, so the output is the same for any thread count and any
    /// chunking of the input.
    package static func segmentSize(inputSize: Int64?, blockSize: Int) -> Int64 {
        let block = Int64(blockSize)
        var size = (baseSegmentSize + block - 1) / block * block
        if let inputSize {
            while segmentCount(inputSize: inputSize, segmentSize: size) > maximumSegments { size *= 2 }
        }
        return size
    }

    /// The segments an input of `inputSize` bytes is cut into (0 for an empty one).
    package static func segmentCount(inputSize: Int64, segmentSize: Int64) -> Int {
        // No overflow for any positive sizes (a header's fields are untrusted).
        Int(inputSize / segmentSize + (inputSize % segmentSize == 0 ? 0 : 1))
    }

    /// The subfield's data length that holds the table of `segments` segments.
    package static func subfieldLength(segments: Int) -> Int {
        fixedLength + entryLength * segments
    }

    /// The subfield's data, `length` bytes: this index (flags bit 0 set), zero-padded.
    ///
    /// - Precondition: the table fits in `length` bytes.
    package func encoded(length: Int) -> [UInt8] {
        precondition(Self.subfieldLength(segments: segments.count) <= length, "the index does not fit its reserved subfield")
        var bytes = [Self.version, 1]
        bytes.appendLittleEndian(UInt64(segmentSize))
        bytes.appendLittleEndian(UInt64(totalSize))
        bytes.appendLittleEndian(UInt32(segments.count))
        for segment in segments {
            bytes.appendLittleEndian(segment.compressedLength)
            bytes.appendLittleEndian(segment.crc32)
        }
        bytes += repeatElement(0, count: length - bytes.count)
        return bytes
    }

    /// A subfield reserved for an index of up to `segments` segments and not filled in (yet):
    /// the version, clear flags, zeros.
    package static func reserved(segments: Int) -> [UInt8] {
        [version] + repeatElement(0, count: subfieldLength(segments: segments) - 1)
    }

    /// The index a subfield's data holds; `nil` for another version, a subfield left unused
    /// (flags bit 0 clear), or data that does not hold a consistent table: no segment, a
    /// segment size of 0, a table longer than the data, or segments that do not add up to the
    /// total size.
    package init?(subfield data: some Collection<UInt8>) {
        let bytes = Array(data)
        guard bytes.count >= Self.fixedLength, bytes[0] == Self.version, bytes[1] & 1 == 1 else { return nil }
        let segmentSize = Int64(truncatingIfNeeded: bytes.littleEndian(UInt64.self, at: 2))
        let totalSize = Int64(truncatingIfNeeded: bytes.littleEndian(UInt64.self, at: 10))
        let count = Int(bytes.littleEndian(UInt32.self, at: 18))
        guard segmentSize > 0, totalSize > 0, count > 0, Self.subfieldLength(segments: count) <= bytes.count,
            Self.segmentCount(inputSize: totalSize, segmentSize: segmentSize) == count
        else { return nil }
        self.segmentSize = segmentSize
        self.totalSize = totalSize
        segments = (0..<count).map { index in
            let offset = Self.fixedLength + Self.entryLength * index
            return Segment(
                compressedLength: bytes.littleEndian(UInt32.self, at: offset), crc32: bytes.littleEndian(UInt32.self, at: offset + 4))
        }
    }

    /// Whether a decoder may follow this index: it is not damaged (``damage``) and its segments
    /// are at most ``ParallelGzipDecoder/maximumSegmentSize`` (a larger one is no damage: the
    /// index of an input over 512 GiB, whose segments are decoded on one thread).
    package var isUsable: Bool {
        damage == nil && segmentSize <= ParallelGzipDecoder.maximumSegmentSize
    }

    /// Why the table cannot be right, naming the first segment whose compressed length is 0
    /// or more than deflate makes of a segment (so a forged index does not make a decoder
    /// gather gigabytes for one segment); `nil` when every length is plausible.
    package var damage: String? {
        let bound = segmentSize + segmentSize / 8 + (64 << 10)
        guard let number = segments.firstIndex(where: { $0.compressedLength == 0 || Int64($0.compressedLength) > bound }) else {
            return nil
        }
        return "segment \(number + 1)'s compressed length, \(segments[number].compressedLength), "
            + "is not that of a segment of \(uncompressedLength(ofSegment: number)) bytes"
    }

    /// Why a subfield that says it holds an index (version 1, flags bit 0 set) holds none that
    /// ``init(subfield:)`` accepts; `nil` for a subfield of another version, one left unused, or
    /// an index.
    package static func damage(ofSubfield data: some Collection<UInt8>) -> String? {
        let bytes = Array(data)
        guard bytes.count >= 2, bytes[0] == version, bytes[1] & 1 == 1, GzipIndex(subfield: bytes) == nil else { return nil }
        guard bytes.count >= fixedLength else { return "its subfield of \(bytes.count) bytes is shorter than its fixed fields" }
        let segmentSize = Int64(truncatingIfNeeded: bytes.littleEndian(UInt64.self, at: 2))
        let totalSize = Int64(truncatingIfNeeded: bytes.littleEndian(UInt64.self, at: 10))
        let count = Int(bytes.littleEndian(UInt32.self, at: 18))
        if segmentSize <= 0 { return "its segment size is \(segmentSize)" }
        if totalSize <= 0 { return "its total size is \(totalSize)" }
        if count <= 0 { return "it lists no segment" }
        if subfieldLength(segments: count) > bytes.count { return "it lists \(count) segments, more than its subfield holds" }
        let expected = segmentCount(inputSize: totalSize, segmentSize: segmentSize)
        return "it lists \(count) segments, but a total of \(totalSize) bytes in segments of \(segmentSize) makes \(expected)"
    }

    /// The member's deflate data: the sum of the segments' compressed lengths.
    package var compressedLength: Int64 {
        segments.reduce(0) { $0 + Int64($1.compressedLength) }
    }

    /// The uncompressed bytes of segment `index`: ``segmentSize``, or what is left for the last.
    package func uncompressedLength(ofSegment index: Int) -> Int64 {
        min(segmentSize, totalSize - Int64(index) * segmentSize)
    }

    /// Whether a member's trailer (CRC-32 then ISIZE, little-endian: RFC 1952 §2.3.1) says what
    /// this index says: ISIZE is ``totalSize`` modulo 2³², and the CRC-32 is the segments' own
    /// combined (zlib's `crc32_combine`). `false` for fewer than 8 bytes (a truncated file).
    package func matches(trailer: [UInt8]) -> Bool {
        guard trailer.count == 8, trailer.littleEndian(UInt32.self, at: 4) == UInt32(truncatingIfNeeded: totalSize) else {
            return false
        }
        let crc32 = segments.indices.reduce(UInt32(0)) { crc32, number in
            CRC32.combine(crc32, segments[number].crc32, secondLength: uncompressedLength(ofSegment: number))
        }
        return crc32 == trailer.littleEndian(UInt32.self, at: 0)
    }
}

extension [UInt8] {
    /// Appends `value`'s bytes, least significant first.
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        for shift in stride(from: 0, to: T.bitWidth, by: 8) { append(UInt8(truncatingIfNeeded: value >> shift)) }
    }

}

extension RandomAccessCollection<UInt8> where Index == Int {
    /// The `T` stored least significant byte first at `offset` from the start.
    func littleEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        (0..<(T.bitWidth / 8)).reduce(T(0)) { value, index in value | T(self[startIndex + offset + index]) << (8 * index) }
    }
}
