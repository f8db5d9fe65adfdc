// libFuzzer target over ParallelGzipDecoder (`sluice decompress -p 2`): any bytes, in any
// chunks, with the control bytes of GzipDecoderFuzz (Fuzz/GzipDecoderFuzz). Its seeds are
// indexed members with small segments (the index's format allows any segment size), BGZF
// members, and those altered: forged CRC-32s and lengths, flipped bits, cuts.
//
// The payload goes to ParallelGzipDecoder on two threads and to zlib's own inflate
// (Fuzz/Shared/GzipDifferential.swift). The promise checked: never output that `gzip -d`
// would not give. The target stops the process when:
//   - zlib accepts and the decoder fails, or gives other output or another CRC-32;
//   - zlib rejects and the decoder accepts;
//   - the decoder fails after output that is not a prefix of zlib's;
//   - an emitted chunk is empty or larger than the output chunk size, or the output passes
//     the limit.
// A warning (a segment that does not match its index) is allowed; the error's kind is not
// compared (a forged index may lead the decoder to meet the damage elsewhere).
import Sluice

@_cdecl("LLVMFuzzerTestOneInput")
public func parallelGzipDecoderFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    guard let (parsed, payload) = FuzzPlan.parse(input) else { return 0 }
    var plan = parsed
    plan.setPayload(Array(payload))
    let expected = referenceDecode(plan.payload, chunks: plan.chunks, limit: plan.outputLimit)
    let observed = runBlocking { [plan] in await decodeInParallel(plan) }
    func fail(_ what: String) -> Never {
        fatalError("ParallelGzipDecoder disagrees with zlib: \(what) [payload \(plan.payload.count) bytes, output chunk size \(plan.outputChunkSize), limit \(plan.outputLimit), \(plan.chunks.count) input chunks]")
    }
    if let problem = observed.problems.first { fail(problem) }
    switch (observed.result, expected.verdict) {
    case (.success(let summary), .accepted):
        if observed.output != expected.output {
            fail("accepted with \(observed.output.count) bytes of output, zlib decodes \(expected.output.count) different bytes")
        }
        var crc = CRC32()
        observed.output.withUnsafeBytes { crc.update($0) }
        if summary.crc32 != crc.value { fail("summary CRC-32 \(String(describing: summary.crc32)), output's \(crc.value)") }
    case (.success, .rejected(let kind, _, let message)):
        fail("accepted; zlib rejects: \(kind) \(message ?? "")")
    case (.failure(let error), .accepted):
        fail("rejected (\(error)); zlib accepts with \(expected.output.count) bytes")
    case (.failure, .rejected):
        if !expected.output.starts(with: observed.output) {
            fail("output before the error (\(observed.output.count) bytes) is not a prefix of zlib's (\(expected.output.count) bytes)")
        }
    }
    return 0
}

func decodeInParallel(_ plan: FuzzPlan) async -> Observed {
    var observed = Observed()
    let decoder = ParallelGzipDecoder(threadCount: 2, outputChunkSize: plan.outputChunkSize, outputLimit: Int64(plan.outputLimit))
    let emit: (Chunk) async throws -> Void = { chunk in observed.record(chunk, plan) }
    do {
        for range in plan.chunks {
            try await decoder.process(Chunk(plan.payload[range]), emit: emit)
        }
        observed.result = .success(try await decoder.finish(emit: emit))
    } catch let error as GzipError {
        observed.result = .failure(error)
    } catch {
        observed.problems.append("threw a non-GzipError \(error)")
    }
    return observed
}
