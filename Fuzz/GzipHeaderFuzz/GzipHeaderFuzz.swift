// libFuzzer target over GzipDecoder's handling of gzip headers (RFC 1952 §2.3.1): the input
// describes a header field by field, and the target builds the member around it (a valid
// header CRC when FHCRC is set, deflate data, the trailer), so the fuzzer spends its time on
// flags and optional fields instead of on checksums it cannot guess. Built by Fuzz/run with
// Fuzz/Shared; the same differential check as GzipDecoderFuzz.
//
// Input: the control bytes of GzipDecoderFuzz (output chunk size, input chunk sizes, output
// limit), then
//   FLG      the header's flags, as is (reserved bits included)
//   MODE     bit 0: a wrong header CRC; bit 1: two copies of the member; bit 2: cut the member
//            after its header; bit 3: a wrong CRC-32 in the trailer; bits 4-7: the level (mod 10)
//   XL, XL bytes        FEXTRA's data (XLEN = XL), when FLG has FEXTRA
//   NL, NL bytes        FNAME (then a NUL), when FLG has FNAME; a NUL inside ends the field early
//   CL, CL bytes        FCOMMENT (then a NUL), when FLG has FCOMMENT
//   the rest            the data, compressed as the member's deflate data
import CZlib

@_cdecl("LLVMFuzzerTestOneInput")
public func gzipHeaderFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    guard var (plan, rest) = FuzzPlan.parse(input), rest.count >= 2 else { return 0 }
    let flags = rest.removeFirst()
    let mode = rest.removeFirst()
    func field() -> ArraySlice<UInt8> {
        guard let length = rest.popFirst() else { return [] }
        let field = rest.prefix(Int(length))
        rest = rest.dropFirst(Int(length))
        return field
    }
    let extra = field(), name = field(), comment = field()
    let content = Array(rest)

    var header: [UInt8] = [0x1F, 0x8B, 8, flags, 0, 0, 0, 0, 0, 255]
    if flags & 0x04 != 0 { header += [UInt8(extra.count), 0] + extra }
    if flags & 0x08 != 0 { header += name + [0] }
    if flags & 0x10 != 0 { header += comment + [0] }
    if flags & 0x02 != 0 {
        let crc = crc32(of: header) ^ (mode & 1 == 0 ? 0 : 0x0101)
        header += [UInt8(truncatingIfNeeded: crc), UInt8(truncatingIfNeeded: crc >> 8)]
    }
    var member = header
    if mode & 4 == 0 {
        let crc = crc32(of: content) ^ (mode & 8 == 0 ? 0 : 0x8000_0000)
        let size = UInt32(truncatingIfNeeded: content.count)
        member += rawDeflate(content, level: Int32(mode >> 4) % 10)
        member += (0..<4).map { UInt8(truncatingIfNeeded: crc >> (8 * $0)) }
        member += (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) }
    }
    plan.setPayload(mode & 2 == 0 ? member : member + member)
    checkAgainstZlib(plan)
    return 0
}

private func crc32(of bytes: [UInt8]) -> UInt32 {
    bytes.withUnsafeBufferPointer { UInt32(truncatingIfNeeded: CZlib.crc32(0, $0.baseAddress, UInt32($0.count))) }
}

/// `bytes` as raw deflate data (RFC 1951) at `level`, through zlib.
private func rawDeflate(_ bytes: [UInt8], level: Int32) -> [UInt8] {
    let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    stream.initialize(to: z_stream())
    defer { stream.deinitialize(count: 1); stream.deallocate() }
    guard CZlib_deflateInit2(stream, level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK else {
        fatalError("deflateInit2 failed")
    }
    defer { deflateEnd(stream) }
    var output = [UInt8](repeating: 0, count: Int(deflateBound(stream, UInt(bytes.count))) + 16)
    let produced = bytes.withUnsafeBufferPointer { input in
        output.withUnsafeMutableBufferPointer { output in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.pointee.avail_in = UInt32(input.count)
            stream.pointee.next_out = output.baseAddress
            stream.pointee.avail_out = UInt32(output.count)
            guard deflate(stream, Z_FINISH) == Z_STREAM_END else { fatalError("deflate did not finish") }
            return output.count - Int(stream.pointee.avail_out)
        }
    }
    return Array(output.prefix(produced))
}
