import CZlib
import Testing
@testable import Sluice
import SluiceTestSupport

private let hello = Array("hello\n".utf8)
private let world = Array("world\n".utf8)

/// The member `printf 'hello\n' | gzip -n` makes (RFC 1952 §2.3.1 header, then deflate, then trailer).
private func helloMember() async throws -> [UInt8] {
    try await gzipped(hello)
}

/// The deflate data of a member: the bytes between its 10-byte header and 8-byte trailer.
private func deflateBody(of member: [UInt8]) -> [UInt8] {
    Array(member[10..<(member.count - 8)])
}

private func littleEndian(_ value: UInt32) -> [UInt8] {
    (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
}

@Suite struct GzipDecoderTests {
    // MARK: Interoperability

    @Test(
        .enabled(if: Tool.gzip != nil, "gzip is not installed"),
        arguments: [1, 6, 9], inputChunkSizes)
    func decodesGzipOutput(level: Int, chunkSize: Int) async throws {
        let data = sampleData(count: dataSize(forChunkSize: chunkSize), seed: UInt64(100 + level))
        let gzip = try await Tool.run(Tool.gzip!, ["-n", "-\(level)", "-c"], input: data)
        #expect(gzip.status == 0)
        let run = try await drive(GzipDecoder(outputChunkSize: 64 << 10), gzip.output, chunkSize: chunkSize)
        #expect(run.output == data)
        #expect(run.largestChunk <= 64 << 10)
        #expect(run.summary == TransformSummary(crc32: CRC32(data).value))
    }

    @Test(
        .enabled(if: Tool.pigz != nil, "pigz is not installed"),
        arguments: inputChunkSizes)
    func decodesPigzOutput(chunkSize: Int) async throws {
        let data = sampleData(count: dataSize(forChunkSize: chunkSize), seed: 7)
        let pigz = try await Tool.run(Tool.pigz!, ["-n", "-6", "-c"], input: data)
        #expect(pigz.status == 0)
        let run = try await drive(GzipDecoder(), pigz.output, chunkSize: chunkSize)
        #expect(run.output == data)
        #expect(run.summary.crc32 == CRC32(data).value)
    }

    // MARK: C01 concatenated members

    @Test(arguments: inputChunkSizes)
    func decodesTwoConcatenatedMembers(chunkSize: Int) async throws {
        let input = try await gzipped(hello) + gzipped(world)
        let run = try await drive(GzipDecoder(), input, chunkSize: chunkSize)
        #expect(run.output == hello + world)
        #expect(run.summary == TransformSummary(crc32: CRC32(hello + world).value))
    }

    @Test(.enabled(if: Tool.gzip != nil, "gzip is not installed"))
    func decodesTwoThousandOneLineMembersLikeGzip() async throws {
        let many = try await Tool.run("/bin/sh", ["-c", "for i in $(seq 2000); do echo \"line $i\" | gzip -n; done"])
        #expect(many.status == 0)
        let expected = try await Tool.run(Tool.gzip!, ["-dc"], input: many.output)
        #expect(expected.status == 0)
        #expect(expected.output.count == 18_893)
        for chunkSize in inputChunkSizes {
            let run = try await drive(GzipDecoder(), many.output, chunkSize: chunkSize)
            #expect(run.output == expected.output, "chunk size \(chunkSize)")
            #expect(run.summary == TransformSummary(crc32: CRC32(expected.output).value))
        }
    }

    // MARK: C02 bytes after the last member

    @Test(arguments: [1, 7, 4096])
    func nulPaddingAfterTheLastMemberIsSilent(chunkSize: Int) async throws {
        let run = try await drive(GzipDecoder(), helloMember() + [UInt8](repeating: 0, count: 512), chunkSize: chunkSize)
        #expect(run.output == hello)
        #expect(run.summary.warnings.isEmpty)
    }

    @Test(arguments: [1, 7, 4096])
    func garbageAfterTheLastMemberKeepsTheOutputWithOneWarning(chunkSize: Int) async throws {
        for garbage in [Array("GARBAGE!!".utf8), [0x1F, 0x41, 0x42], [0, 0, 0x1F, 0x8B, 8, 0]] {
            let run = try await drive(GzipDecoder(), helloMember() + garbage, chunkSize: chunkSize)
            #expect(run.output == hello)
            #expect(run.summary.warnings.count == 1)
            #expect(run.summary.warnings.first?.message.contains("trailing garbage") == true)
            #expect(run.summary.crc32 == CRC32(hello).value)
        }
    }

    @Test(arguments: [1, 7, 4096])
    func theStartOfAnotherMemberIsATruncatedMember(chunkSize: Int) async throws {
        let member = try await helloMember()
        for cut in [1, 2, 3, 10, 15, member.count - 1] {
            let input = member + member.prefix(cut)
            let error = await decodingError(input, chunkSize: chunkSize)
            #expect(error?.kind == .truncatedInput, "cut \(cut)")
            #expect(error?.offset == Int64(input.count))
        }
    }

    @Test func aSecondMemberWithAnUnknownMethodIsAnError() async throws {
        let member = try await helloMember()
        var second = member
        second[2] = 7
        let error = await decodingError(member + second)
        #expect(error?.kind == .unknownMethod(7))
        #expect(error?.offset == Int64(member.count + 2))
    }

    // MARK: C03 empty things

    @Test func emptyInputIsAnUnexpectedEndOfFile() async {
        let error = await decodingError([])
        #expect(error?.kind == .truncatedInput)
        #expect(error?.description == "unexpected end of file at byte 0")
    }

    @Test(arguments: [1, 4096])
    func onlyTheMagicBytesAreAnUnexpectedEndOfFile(chunkSize: Int) async {
        for input: [UInt8] in [[0x1F], [0x1F, 0x8B], [0x1F, 0x8B, 8]] {
            let error = await decodingError(input, chunkSize: chunkSize)
            #expect(error?.kind == .truncatedInput)
            #expect(error?.offset == Int64(input.count))
        }
    }

    // MARK: C04 truncation

    @Test(arguments: [1 << 20, 4096, 7])
    func truncatedMembersFail(chunkSize: Int) async throws {
        let data = sampleData(count: 800_000, seed: 4)
        let member = try await gzipped(data)
        #expect(member.count > 200_000)
        for length in [member.count / 2, member.count - 8, member.count - 3, 10] {
            let error = await decodingError(Array(member.prefix(length)), chunkSize: chunkSize)
            #expect(error?.kind == .truncatedInput, "cut at \(length)")
            #expect(error?.offset == Int64(length))
        }
    }

    // MARK: C05 corrupt trailer

    @Test(arguments: [1, 4096])
    func aWrongStoredCRCIsACRCMismatch(chunkSize: Int) async throws {
        let data = sampleData(count: 30_000)
        var member = try await gzipped(data)
        member[member.count - 8] ^= 0xFF
        let error = await decodingError(member, chunkSize: chunkSize)
        #expect(error?.kind == .crc32Mismatch(expected: CRC32(data).value ^ 0xFF, actual: CRC32(data).value))
        #expect(error?.offset == Int64(member.count - 8))
    }

    @Test(arguments: [1, 4096])
    func aWrongStoredSizeIsASizeMismatch(chunkSize: Int) async throws {
        let data = sampleData(count: 30_000)
        var member = try await gzipped(data)
        member[member.count - 1] ^= 0x01
        let error = await decodingError(member, chunkSize: chunkSize)
        #expect(error?.kind == .sizeMismatch(expected: UInt32(data.count) ^ 0x0100_0000, actual: UInt32(data.count)))
        #expect(error?.offset == Int64(member.count - 4))
        #expect(error?.description == "length mismatch (ISIZE \(UInt32(data.count) ^ 0x0100_0000), got \(data.count)) at byte \(member.count - 4)")
    }

    // MARK: C06 optional header fields

    /// A member with FEXTRA, FNAME, FCOMMENT and FHCRC, built as `cases/mkhdr.py` does.
    private func memberWithAllHeaderFields() async throws -> (member: [UInt8], payload: [UInt8], commentAt: Int) {
        let payload = Array(String(repeating: "header-flags test payload\n", count: 100).utf8)
        let body = deflateBody(of: try await gzipped(payload, level: .best))
        let extra = Array("AB".utf8) + [2, 0] + Array("xy".utf8)
        var header: [UInt8] = [0x1F, 0x8B, 8, 0x02 | 0x04 | 0x08 | 0x10, 0, 0, 0, 0, 0, 0xFF]
        header += [UInt8(extra.count), 0] + extra + Array("name.txt".utf8) + [0]
        let commentAt = header.count
        header += Array("a comment".utf8) + [0]
        let headerCRC = CRC32(header).value
        header += [UInt8(headerCRC & 0xFF), UInt8((headerCRC >> 8) & 0xFF)]
        let trailer = littleEndian(CRC32(payload).value) + littleEndian(UInt32(payload.count))
        return (header + body + trailer, payload, commentAt)
    }

    @Test(arguments: [1, 7, 4096])
    func acceptsExtraNameCommentAndHeaderCRC(chunkSize: Int) async throws {
        let (member, payload, _) = try await memberWithAllHeaderFields()
        let run = try await drive(GzipDecoder(), member, chunkSize: chunkSize)
        #expect(run.output == payload)
        #expect(run.summary == TransformSummary(crc32: CRC32(payload).value))
    }

    @Test(.enabled(if: Tool.gzip != nil, "gzip is not installed"))
    func theHandBuiltHeaderIsValidForGzip() async throws {
        let (member, payload, _) = try await memberWithAllHeaderFields()
        let gzip = try await Tool.run(Tool.gzip!, ["-dc"], input: member)
        #expect(gzip.status == 0)
        #expect(gzip.output == payload)
    }

    @Test(arguments: [1, 4096])
    func aChangedCommentIsAHeaderCRCMismatch(chunkSize: Int) async throws {
        var (member, _, commentAt) = try await memberWithAllHeaderFields()
        member[commentAt] ^= 0x20
        let error = await decodingError(member, chunkSize: chunkSize)
        #expect(error?.kind == .headerCRCMismatch)
        #expect(error?.description.hasPrefix("header CRC mismatch at byte") == true)
    }

    // MARK: C07 not gzip

    @Test func zlibStreamsAndRawDeflateAreNotGzip() async throws {
        let data = sampleData(count: 5000)
        let body = deflateBody(of: try await gzipped(data))
        let adler = data.withUnsafeBytes { UInt32(adler32(1, $0.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt($0.count))) }
        let adlerBytes = littleEndian(adler).reversed()
        let zlibStream = [0x78, 0x9C] + body + adlerBytes
        let smallWindowZlibStream = [0x18, 0x95] + body + adlerBytes
        for input in [zlibStream, smallWindowZlibStream, body] {
            let error = await decodingError(input)
            #expect(error?.kind == .notGzip)
            #expect(error?.offset == 0)
            #expect(error?.description == "not in gzip format at byte 0")
        }
    }

    @Test func methodSevenIsAnUnknownMethod() async throws {
        var member = try await helloMember()
        member[2] = 7
        let error = await decodingError(member, chunkSize: 1)
        #expect(error?.kind == .unknownMethod(7))
        #expect(error?.description == "unknown method 7 at byte 2")
    }

    @Test func invalidDeflateDataIsCorruptData() async throws {
        var member = try await helloMember()
        member[10] |= 0x06  // BTYPE 11: a reserved block type (RFC 1951 §3.2.3)
        let error = await decodingError(member)
        #expect(error?.kind == .corruptData)
        #expect(error?.zlibMessage == "invalid block type")
        #expect(error?.description.hasPrefix("invalid compressed data (invalid block type)") == true)
    }

    @Test func reservedHeaderFlagsAreCorruptData() async throws {
        var member = try await helloMember()
        member[3] = 0x20
        let error = await decodingError(member)
        #expect(error?.kind == .corruptData)
    }

    @Test func laterCallsRethrowTheFirstError() async throws {
        let decoder = GzipDecoder()
        await #expect(throws: GzipError(.notGzip, offset: 0)) { try await decoder.process(Chunk(Array("plain".utf8))) { _ in } }
        await #expect(throws: GzipError(.notGzip, offset: 0)) { try await decoder.process(Chunk([])) { _ in } }
        await #expect(throws: GzipError(.notGzip, offset: 0)) { _ = try await decoder.finish { _ in } }
    }

    // MARK: Output limit and bounded output

    @Test(arguments: [1, 4096])
    func outputBeyondTheLimitFails(chunkSize: Int) async throws {
        let data = sampleData(count: 100_000)
        let input = try await gzipped(data) + gzipped(hello)
        let total = Int64(data.count + hello.count)

        let exact = try await drive(GzipDecoder(outputChunkSize: 4096, outputLimit: total), input, chunkSize: chunkSize)
        #expect(exact.output == data + hello)

        for limit in [total - 1, Int64(data.count), 0] {
            let decoder = GzipDecoder(outputChunkSize: 4096, outputLimit: limit)
            var emitted: Int64 = 0
            let error = await #expect(throws: GzipError.self) {
                var start = 0
                while start < input.count {
                    let end = min(start + chunkSize, input.count)
                    try await decoder.process(Chunk(Array(input[start..<end]))) { emitted += Int64($0.count) }
                    start = end
                }
                _ = try await decoder.finish { emitted += Int64($0.count) }
            }
            #expect(error?.kind == .outputLimitExceeded(limit: limit))
            #expect(emitted <= limit)
        }
    }

    @Test func aLargeMemberOfZerosDecodesInBoundedChunks() async throws {
        let megabyte = [UInt8](repeating: 0, count: 1 << 20)
        let encoder = try GzipEncoder(level: .fastest)
        var member: [UInt8] = []
        var crc = CRC32()
        for _ in 0..<64 {
            try await encoder.process(Chunk(megabyte)) { member += $0.bytes }
            crc.update(megabyte)
        }
        _ = try await encoder.finish { member += $0.bytes }
        #expect(member.count < 1 << 20)

        let outputChunkSize = 256 << 10
        let run = try await drive(GzipDecoder(outputChunkSize: outputChunkSize), member, chunkSize: 64 << 10, collect: false)
        #expect(run.outputCount == 64 << 20)
        #expect(run.largestChunk <= outputChunkSize)
        #expect(run.summary.crc32 == crc.value)
    }

    @Test func errorsDescribeThemselvesInGzipsWords() {
        #expect(GzipError(.crc32Mismatch(expected: 0x1234, actual: 0xABCD_EF01), offset: 9).description
            == "CRC-32 mismatch (expected 0x00001234, got 0xabcdef01) at byte 9")
        #expect(GzipError(.outputLimitExceeded(limit: 100), offset: 5).description
            == "output limit of 100 bytes exceeded (at input byte 5)")
        #expect(GzipError(.headerCRCMismatch, offset: 3).description == "header CRC mismatch at byte 3")
        #expect(GzipError(.zlib(code: -4), offset: 0).description == "zlib error -4 at byte 0")
    }
}
