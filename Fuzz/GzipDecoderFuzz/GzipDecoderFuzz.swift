// libFuzzer target over GzipDecoder: any bytes, in any chunks. Built by Fuzz/run with
// Fuzz/Shared (not by SwiftPM: it needs `-sanitize=fuzzer`, which Package.swift cannot pass
// without `unsafeFlags`).
//
// Each input is a few control bytes, then the compressed payload:
//
//   byte 0   bits 0-2: output chunk size, one of `outputChunkSizes`
//            bits 3-5: n, the count of chunk-size bytes that follow
//            bit 6:    a small output limit: one more byte L follows, limit = 13 * L bytes
//                      (otherwise the limit is `defaultOutputLimit`)
//   n bytes  the sizes of the input chunks, used in turn until the payload is used up:
//            0 = the rest of the payload, 255 = an empty chunk, v = v bytes
//
// The payload goes to GzipDecoder (public API only) in those chunks, and to a reference
// decoder written against zlib's C API (Fuzz/Shared/GzipDifferential.swift). The target stops
// the process (libFuzzer keeps the input) when:
//   - the decoder accepts and its output, CRC-32 or warning differ from the reference's;
//   - the decoder rejects and the reference does not, or the kinds differ (for trailer, header
//     CRC, magic and method errors the offsets and stored values too);
//   - an emitted chunk is empty or larger than the output chunk size; more output than the
//     limit; output emitted before an error that is not a prefix of the reference's output;
//   - a call to `process` returns without having emitted all the output its input decodes to
//     (what zlib, given the input up to the same point, has produced when it wants more);
//   - a call after an error does not throw the same error.
// The decoder's own preconditions and AddressSanitizer catch the rest; libFuzzer's -timeout,
// -rss_limit_mb and -malloc_limit_mb (set by Fuzz/run) make a hang or unbounded memory a
// crash too.
import Sluice

@_cdecl("LLVMFuzzerTestOneInput")
public func gzipDecoderFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    guard let (parsed, payload) = FuzzPlan.parse(input) else { return 0 }
    var plan = parsed
    plan.setPayload(Array(payload))
    checkAgainstZlib(plan)
    return 0
}

