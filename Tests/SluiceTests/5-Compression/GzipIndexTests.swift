import CZlib
import Testing
@testable import Sluice
import SluiceTestSupport

/// The index of an indexed gzip member (`GzipIndex`) and the access points the encoder lays
/// out for it: each segment decodes alone, from its access point, with zlib's raw inflate.
@Suite(.timeLimit(.minutes(3)))
struct GzipIndexTests {
    @Test func anIndexReadsBackAsWritten() throws {
        let index = GzipIndex(
            segmentSize: 2 << 20, totalSize: 5 << 20,
            segments: [.init(compressedLength: 100, crc32: 0xDEAD_BEEF), .init(compressedLength: 7, crc32: 1), .init(compressedLength: 1 << 31, crc32: 0)])
        let data = index.encoded(length: GzipIndex.subfieldLength(segments: 5))
        #expect(data.count == 22 + 40)
        #expect(Array(data[0..<2]) == [1, 1])
        #expect(data.suffix(16).allSatisfy { $0 == 0 })
        #expect(GzipIndex(subfield: data) == index)
        #expect(index.uncompressedLength(ofSegment: 2) == 1 << 20)
    }

    /// A subfield reserved and left unused, of another version, or whose table does not add up
    /// is no index.
    @Test func anInconsistentSubfieldIsNoIndex() throws {
        let index = GzipIndex(segmentSize: 2 << 20, totalSize: 3 << 20, segments: [.init(compressedLength: 9, crc32: 9), .init(compressedLength: 9, crc32: 9)])
        let good = index.encoded(length: GzipIndex.subfieldLength(segments: 2))
        #expect(GzipIndex(subfield: good) != nil)
        #expect(GzipIndex(subfield: GzipIndex.reserved(segments: 2)) == nil)
        var other = good
        other[0] = 2
        #expect(GzipIndex(subfield: other) == nil)
        var short = good
        short[10] = 0x10  // a total of 16 bytes more: still two segments, fine
        #expect(GzipIndex(subfield: short) != nil)
        var wrongCount = good
        wrongCount[18] = 3  // three segments for 3 MiB in 2 MiB segments
        #expect(GzipIndex(subfield: wrongCount) == nil)
        #expect(GzipIndex(subfield: good.prefix(29)) == nil)  // the table cut short
        var noSize = good
        for offset in 2..<10 { noSize[offset] = 0 }
        #expect(GzipIndex(subfield: noSize) == nil)
    }

    /// Segments are 2 MiB, a multiple of the block size, doubled until the index of a known
    /// size fits in one subfield.
    @Test func theSegmentSizeDependsOnTheInputSizeAndTheBlockSizeAlone() {
        #expect(GzipIndex.segmentSize(inputSize: nil, blockSize: 256 << 10) == 2 << 20)
        #expect(GzipIndex.segmentSize(inputSize: 1 << 40, blockSize: 256 << 10) == 256 << 20)  // 4,096 segments
        #expect(GzipIndex.segmentSize(inputSize: 16 << 30, blockSize: 256 << 10) == 4 << 20)  // 8,192 of 2 MiB do not fit
        #expect(GzipIndex.segmentSize(inputSize: 8_188 * (2 << 20), blockSize: 256 << 10) == 2 << 20)  // 8,188 fit
        #expect(GzipIndex.segmentSize(inputSize: 3 << 20, blockSize: 3 << 20) == 3 << 20)
        #expect(GzipIndex.segmentSize(inputSize: nil, blockSize: 768 << 10) == 2_359_296)  // 3 blocks
        for size: Int64 in [1, 2 << 20, (2 << 20) + 1, 16 << 30, 1 << 45] {
            let segment = GzipIndex.segmentSize(inputSize: size, blockSize: 256 << 10)
            #expect(GzipIndex.segmentCount(inputSize: size, segmentSize: segment) <= GzipIndex.maximumSegments)
            #expect(segment % (256 << 10) == 0)
        }
        #expect(GzipIndex.subfieldLength(segments: GzipIndex.maximumSegments) <= 65_531)
    }

    /// The encoder's output with its patch applied, as a file sink applies it.
    static func indexed(_ data: [UInt8], threads: Int = 2, chunkSize: Int = 100_000, inputSize: Int64? = nil) async throws
        -> (bytes: [UInt8], patched: Bool)
    {
        let encoder = ParallelGzipEncoder(
            level: .default, threadCount: threads, blockSize: 256 << 10, outputChunkSize: 64 << 10, maximumBlocksInFlight: nil,
            indexing: .accessPoints(inputSize: inputSize ?? Int64(data.count), reservesIndex: true))
        let run = try await drive(encoder, data, chunkSize: chunkSize)
        var bytes = run.output
        guard let patch = run.summary.patch else { return (bytes, false) }
        bytes.replaceSubrange(Int(patch.offset)..<Int(patch.offset) + patch.bytes.count, with: patch.bytes)
        return (bytes, true)
    }

    /// The index a member's header holds, and where its deflate data starts.
    static func index(of member: [UInt8]) -> (index: GzipIndex?, dataStart: Int) {
        guard member[3] & 0x04 != 0 else { return (nil, 10) }
        let extraLength = Int(member.littleEndian(UInt16.self, at: 10))
        #expect(Array(member[12..<14]) == [0x53, 0x4C])
        let length = Int(member.littleEndian(UInt16.self, at: 14))
        #expect(length + 4 == extraLength)
        return (GzipIndex(subfield: member[16..<16 + length]), 12 + extraLength)
    }

    /// Each segment, from its access point, decodes alone with a raw inflate to its bytes of
    /// the input (CRC-32 as listed); all but the last end with a sync marker and no final
    /// block, the last with the final block, then the trailer.
    static func expectSegmentsDecodeAlone(_ member: [UInt8], _ input: [UInt8]) throws {
        let (found, start) = index(of: member)
        let index = try #require(found)
        #expect(index.totalSize == Int64(input.count))
        var position = start
        for (number, segment) in index.segments.enumerated() {
            let compressed = Array(member[position..<position + Int(segment.compressedLength)])
            let expected = Array(input[Int(index.segmentSize) * number..<Int(index.segmentSize) * number + Int(index.uncompressedLength(ofSegment: number))])
            let stream = try ZStream(.rawInflate)
            var output = [UInt8](repeating: 0, count: expected.count + 1)
            let step = compressed.withUnsafeBytes { input in
                output.withUnsafeMutableBytes { stream.inflate(input, into: $0) }
            }
            #expect(step.consumed == compressed.count, "segment \(number)")
            #expect(step.produced == expected.count, "segment \(number)")
            #expect(Array(output.prefix(step.produced)) == expected, "segment \(number)")
            var crc = CRC32()
            expected.withUnsafeBytes { crc.update($0) }
            #expect(crc.value == segment.crc32)
            let isLast = number == index.segments.count - 1
            #expect((step.code == Z_STREAM_END) == isLast, "segment \(number): \(step.code)")
            if !isLast { #expect(compressed.suffix(4) == [0, 0, 0xFF, 0xFF]) }
            position += compressed.count
        }
        #expect(member.count - position == 8)
    }

    @Test(arguments: [1, 2])
    func everySegmentDecodesAloneFromItsAccessPoint(threads: Int) async throws {
        let input = sampleData(count: (5 << 20) + 12_345)
        let (member, patched) = try await Self.indexed(input, threads: threads)
        #expect(patched)
        #expect(Self.index(of: member).index?.segments.count == 3)
        try Self.expectSegmentsDecodeAlone(member, input)
        #expect(try await drive(GzipDecoder(), member, chunkSize: 65_536).output == input)
    }

    /// The same input gives the same bytes for any thread count and any chunking.
    @Test func theOutputDependsOnTheInputAlone() async throws {
        let input = sampleData(count: (4 << 20) + 1)
        let one = try await Self.indexed(input, threads: 1, chunkSize: 4096)
        let two = try await Self.indexed(input, threads: 2, chunkSize: 1 << 20)
        #expect(one.bytes == two.bytes)
    }

    /// At most one segment: no index, byte for byte the format without one. One byte more:
    /// two segments, indexed.
    @Test(arguments: [0, 1, (2 << 20) - 1, 2 << 20, (2 << 20) + 1])
    func edgeSizes(size: Int) async throws {
        let input = sampleData(count: (2 << 20) + 1).prefix(size).map { $0 }
        let (member, patched) = try await Self.indexed(input)
        let plain = try await drive(
            ParallelGzipEncoder(level: .default, threadCount: 2, blockSize: 256 << 10, outputChunkSize: 64 << 10, maximumBlocksInFlight: nil, indexing: .none),
            input, chunkSize: 100_000)
        if size <= 2 << 20 {
            #expect(!patched)
            #expect(member == plain.output)
        } else {
            #expect(patched)
            try Self.expectSegmentsDecodeAlone(member, input)
        }
        #expect(try await drive(GzipDecoder(), member, chunkSize: 4096).output == input)
    }

    /// An input that grew past what was reserved keeps its subfield, marked unused, and no
    /// index; the member still decodes.
    @Test func anInputThatOutgrewItsReservationHasNoIndex() async throws {
        let input = sampleData(count: (5 << 20) + 1)
        let (member, patched) = try await Self.indexed(input, inputSize: 3 << 20)
        #expect(!patched)
        #expect(member[3] & 0x04 != 0)
        #expect(Self.index(of: member).index == nil)
        #expect(try await drive(GzipDecoder(), member, chunkSize: 65_536).output == input)
    }
}

extension GzipIndexTests {
    /// The decoder's worker accepts every segment of an indexed member, whatever its output
    /// chunk size.
    @Test(arguments: [4096, 1 << 20])
    func theWorkerAcceptsEverySegment(outputChunkSize: Int) async throws {
        let input = sampleData(count: (6 << 20) + 7)
        let (member, _) = try await Self.indexed(input)
        let (found, start) = Self.index(of: member)
        let index = try #require(found)
        let inflater = ParallelGzipDecoder.Inflater(outputChunkSize: outputChunkSize)
        var position = start
        for (number, segment) in index.segments.enumerated() {
            let data = Chunk(member[position..<position + Int(segment.compressedLength)])
            position += data.count
            let decoded = try inflater.decode(ParallelGzipDecoder.Piece.segment(number, of: index, data: data))
            #expect(decoded.failure == nil, "segment \(number)")
        }
    }
}
