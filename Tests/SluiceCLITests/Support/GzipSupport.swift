#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Sluice
import Testing

/// Test data that compresses about half-way: blocks of text lines alternate with blocks of
/// generated noise, so deflate has both matches and literals to code.
func mixedData(count: Int) -> [UInt8] {
    let noise = pattern(count: count, seed: 0xC0FFEE)
    var result: [UInt8] = []
    result.reserveCapacity(count + 128)
    var line = 0
    while result.count < count {
        let blockEnd = min(count, result.count + 4096)
        if (result.count / 4096) % 2 == 0 {
            while result.count < blockEnd {
                result += Array("line \(line): the quick brown fox jumps over the lazy dog\n".utf8)
                line += 1
            }
            result.removeLast(result.count - blockEnd)
        } else {
            result += noise[result.count..<blockEnd]
        }
    }
    return result
}

/// Gzip streams built byte by byte for the cases (C06, C07), around deflate data made by the
/// real `gzip`, so no test depends on Python.
enum GzipBytes {
    /// The raw deflate data (RFC 1951) of `data` as `gzip -n -LEVEL` codes it: its output
    /// without the 10-byte header and the 8-byte trailer.
    static func rawDeflate(of data: [UInt8], level: Int = 9, in sandbox: Sandbox) async throws -> [UInt8] {
        let name = "raw-\(UUID().uuidString)"
        try sandbox.write(data, to: name)
        let result = try await CLI.shell("gzip -n -\(level) -c \(name) > \(name).gz", in: sandbox)
        try #require(result.status == 0, "gzip: \(result.stderr)")
        let member = try #require(sandbox.contents("\(name).gz"))
        unlink(sandbox.path(name))
        unlink(sandbox.path("\(name).gz"))
        try #require(member.count >= 18 && member[3] == 0, "gzip -n wrote a header with optional fields")
        return Array(member[10..<(member.count - 8)])
    }

    static func littleEndian(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        littleEndian(value).reversed()
    }

    /// The Adler-32 of `data` (RFC 1950 §8), the trailer of a zlib stream.
    static func adler32(_ data: [UInt8]) -> UInt32 {
        var (a, b): (UInt32, UInt32) = (1, 0)
        for byte in data {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return b << 16 | a
    }

    /// A zlib stream (RFC 1950) of `data` with the two header bytes `header`: `78 9c` is what
    /// `zlib.compress` writes, `18 95` a 512-byte window (`wbits=9`).
    static func zlibStream(_ data: [UInt8], header: [UInt8], deflate: [UInt8]) -> [UInt8] {
        header + deflate + bigEndian(adler32(data))
    }

    /// A BGZF member (the SAM specification, section 4.1: FEXTRA with a `BC` subfield holding
    /// the member's size - 1) of `data`, whose raw deflate data is `deflate`.
    static func bgzfMember(of data: [UInt8], deflate: [UInt8]) -> [UInt8] {
        let size = 18 + deflate.count + 8
        let header: [UInt8] = [0x1F, 0x8B, 8, 4, 0, 0, 0, 0, 0, 0xFF, 6, 0, 0x42, 0x43, 2, 0]
        return header + [UInt8(truncatingIfNeeded: size - 1), UInt8(truncatingIfNeeded: (size - 1) >> 8)] + deflate
            + littleEndian(CRC32(data).value) + littleEndian(UInt32(data.count))
    }

    /// The raw deflate data (RFC 1951 §3.2.4) of `data` (at most 65,535 bytes) as one final
    /// stored block: deflate without a compressor.
    static func storedBlock(_ data: [UInt8]) -> [UInt8] {
        precondition(data.count <= 0xFFFF, "a stored block holds at most 65,535 bytes")
        let length = UInt16(data.count)
        return [1, UInt8(truncatingIfNeeded: length), UInt8(length >> 8), UInt8(truncatingIfNeeded: ~length), UInt8(~length >> 8)]
            + data
    }

    /// The payload of the C06 member (as `mkhdr.py`).
    static let headerFieldsPayload = Array(String(repeating: "header-flags test payload\n", count: 100).utf8)

    /// A member with FEXTRA (XLEN 6), FNAME `name.txt`, FCOMMENT `a comment` and FHCRC, as
    /// `mkhdr.py` writes it; `comment` replaces the comment after the header CRC is computed,
    /// so a different comment of the same length makes the header CRC wrong.
    static func headerFieldsMember(deflate: [UInt8], comment: String? = nil) -> [UInt8] {
        let payload = headerFieldsPayload
        let extra: [UInt8] = Array("AB".utf8) + [2, 0] + Array("xy".utf8)
        let flags: UInt8 = 0x02 | 0x04 | 0x08 | 0x10  // FHCRC | FEXTRA | FNAME | FCOMMENT
        var header: [UInt8] = [0x1F, 0x8B, 0x08, flags, 0, 0, 0, 0, 0x00, 0xFF]
        header += [UInt8(extra.count), 0] + extra
        header += Array("name.txt".utf8) + [0]
        let commentStart = header.count
        header += Array("a comment".utf8) + [0]
        let headerCRC = CRC32(header).value
        header += [UInt8(truncatingIfNeeded: headerCRC), UInt8(truncatingIfNeeded: headerCRC >> 8)]
        if let comment {
            let replacement = Array(comment.utf8)
            precondition(replacement.count == 9, "the comment keeps its length")
            header.replaceSubrange(commentStart..<(commentStart + 9), with: replacement)
        }
        return header + deflate + littleEndian(CRC32(payload).value) + littleEndian(UInt32(payload.count))
    }
}

/// Checks "not committed" (cases README): the destination `name` is absent, or holds `old`
/// when it existed before, and no temporary file is left in the sandbox.
func expectNotCommitted(
    _ name: String, old: [UInt8]? = nil, in sandbox: Sandbox, sourceLocation: SourceLocation = #_sourceLocation
) {
    if let old {
        #expect(sandbox.contents(name) == old, "'\(name)' lost its old bytes", sourceLocation: sourceLocation)
    } else {
        #expect(!sandbox.exists(name), "'\(name)' was created", sourceLocation: sourceLocation)
    }
    #expect(sandbox.leftovers().isEmpty, "temporary files left: \(sandbox.listing())", sourceLocation: sourceLocation)
}

/// Writes `data` to `name` and `gzip -n -LEVEL` of it to `name.gz`.
func writeWithGzip(_ data: [UInt8], to name: String, level: Int = 6, in sandbox: Sandbox) async throws {
    try sandbox.write(data, to: name)
    let result = try await CLI.shell("gzip -n -\(level) -c \(name) > \(name).gz", in: sandbox)
    try #require(result.status == 0, "gzip: \(result.stderr)")
}

/// The `--chunk-size` values every round trip runs with, and an input size for each that
/// spans many chunks without making the one-byte and seven-byte runs slow.
let roundTripChunkSizes = ["1", "7", "4096", "64K", "1M"]

func roundTripInputSize(chunkSize: String) -> Int {
    switch chunkSize {
    case "1": return 3_000
    case "7": return 20_011
    case "4096": return 300_007
    case "64K": return 1_000_003
    default: return 3 * 1024 * 1024 + 5
    }
}
