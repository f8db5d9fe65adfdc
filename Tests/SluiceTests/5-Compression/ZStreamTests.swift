import CZlib
import SluiceTestSupport
import Testing
@testable import Sluice

/// zlib allocation functions that always fail, as if memory had run out.
private let failingAllocator = ZStream.Allocator(
    allocate: { _, _, _ in nil },
    free: { _, _ in }
)

@Suite struct ZStreamTests {
    @Test(arguments: [ZStream.Mode.inflate, .deflate(.default)])
    func initFailsWithMemErrorThenANormalInitSucceeds(mode: ZStream.Mode) throws {
        let error = #expect(throws: GzipError.self) { try ZStream(mode, allocator: failingAllocator) }
        #expect(error?.kind == .zlib(code: Z_MEM_ERROR))
        let stream = try ZStream(mode)
        #expect(stream.isActive)
    }

    @Test func encoderInitReportsMemError() {
        let error = #expect(throws: GzipError.self) {
            try GzipEncoder(level: .default, outputChunkSize: 1024, allocator: failingAllocator)
        }
        #expect(error?.kind == .zlib(code: Z_MEM_ERROR))
    }

    @Test func decoderReportsMemErrorWithTheFirstInput() async throws {
        let member = try await gzipped(Array("hello\n".utf8))
        let decoder = GzipDecoder(outputChunkSize: 1024, outputLimit: nil, allocator: failingAllocator)
        let error = await #expect(throws: GzipError.self) { try await drive(decoder, member, chunkSize: 64) }
        #expect(error?.kind == .zlib(code: Z_MEM_ERROR))
    }

    @Test func endTwiceIsHarmless() throws {
        let stream = try ZStream(.inflate)
        stream.end()
        #expect(!stream.isActive)
        stream.end()
        #expect(!stream.isActive)
    }

    @Test func oneInflateStreamDecodesSeveralMembers() async throws {
        let first = Array("first member\n".utf8)
        let second = Array("second member\n".utf8)
        let input = try await gzipped(first) + gzipped(second)
        let stream = try ZStream(.inflate)
        var output = [UInt8](repeating: 0, count: 256)
        var position = 0
        var decoded: [UInt8] = []
        for expected in [first, second] {
            let step = input.withUnsafeBytes { bytes in
                output.withUnsafeMutableBytes { stream.inflate(UnsafeRawBufferPointer(rebasing: bytes[position...]), into: $0) }
            }
            #expect(step.code == Z_STREAM_END)
            #expect(stream.checkValue == CRC32(expected).value)
            decoded += output[..<step.produced]
            position += step.consumed
            stream.resetForNextMember()
        }
        #expect(position == input.count)
        #expect(decoded == first + second)
    }

    @Test func deflateThenInflateRoundTrips() throws {
        let data = sampleData(count: 100_000)
        let deflater = try ZStream(.deflate(.best))
        var compressed = [UInt8](repeating: 0, count: 200_000)
        let step = data.withUnsafeBytes { input in
            compressed.withUnsafeMutableBytes { deflater.deflate(input, into: $0, flush: Z_FINISH) }
        }
        #expect(step.code == Z_STREAM_END)
        #expect(step.consumed == data.count)
        #expect(deflater.checkValue == CRC32(data).value)
        let inflater = try ZStream(.inflate)
        var output = [UInt8](repeating: 0, count: data.count)
        let back = compressed.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { inflater.inflate(UnsafeRawBufferPointer(rebasing: input[..<step.produced]), into: $0) }
        }
        #expect(back.code == Z_STREAM_END)
        #expect(output == data)
    }
}
