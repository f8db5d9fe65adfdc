// The differential check shared by the gzip fuzz targets: feed a payload to GzipDecoder in
// fuzzer-chosen chunks, decode it with zlib's own inflate, and stop the process (libFuzzer keeps
// the input) on any disagreement. Built by Fuzz/run against the Sluice library built with the
// same sanitizers; uses only Sluice's public API.
import CZlib
import Dispatch
import Sluice

private let outputChunkSizes = [1, 2, 7, 64, 511, 4096, 32768, 65536]
private let defaultOutputLimit = 1 << 20

/// Decodes `plan.payload` with GzipDecoder and with zlib, and stops the process if they disagree.
func checkAgainstZlib(_ plan: FuzzPlan) {
    let expected = referenceDecode(plan.payload, chunks: plan.chunks, limit: plan.outputLimit)
    let observed = runBlocking { await decodeWithSluice(plan) }
    compare(observed, expected, plan)
}

/// How one fuzz input is fed to the decoder.
struct FuzzPlan: Sendable {
    var outputChunkSize: Int
    var outputLimit: Int
    var payload: [UInt8]
    /// Each chunk as a range of `payload`.
    var chunks: [Range<Int>]

    private init(outputChunkSize: Int) {
        self.outputChunkSize = outputChunkSize
        outputLimit = defaultOutputLimit
        payload = []
        chunks = []
    }

    /// Reads the control bytes at the start of `input` (see the layout in
    /// GzipDecoderFuzz.swift) and returns the plan without a payload, and the bytes after them.
    static func parse(_ input: [UInt8]) -> (FuzzPlan, rest: ArraySlice<UInt8>)? {
        guard let control = input.first else { return nil }
        var position = 1
        let sizeCount = Int(control >> 3) & 7
        guard input.count >= position + sizeCount else { return nil }
        var plan = FuzzPlan(outputChunkSize: outputChunkSizes[Int(control & 7)])
        plan.chunkSizes = input[position..<(position + sizeCount)].map(Int.init)
        position += sizeCount
        if control & 0x40 != 0 {
            guard position < input.count else { return nil }
            plan.outputLimit = 13 * Int(input[position])
            position += 1
        }
        return (plan, input[position...])
    }

    /// The chunk sizes, used in turn: 0 = the rest of the payload, 255 = an empty chunk, v = v bytes.
    private var chunkSizes: [Int] = []

    /// Sets the payload and cuts it into chunks of `chunkSizes`.
    mutating func setPayload(_ bytes: [UInt8]) {
        payload = bytes
        chunks = []
        var start = 0
        var index = 0
        var lastProgress = 0
        repeat {
            var end = payload.count
            if !chunkSizes.isEmpty {
                let size = chunkSizes[index % chunkSizes.count]
                index += 1
                if size == 255 { end = start } else if size != 0 { end = min(start + size, payload.count) }
            }
            if end > start { lastProgress = index }
            // Only empty chunks for a whole round: give the rest at once.
            if index - lastProgress > chunkSizes.count { end = payload.count }
            chunks.append(start..<end)
            start = end
        } while start < payload.count
    }
}

// MARK: - The decoder under test

struct Observed: Sendable {
    var output: [UInt8] = []
    /// After each `process` that returned: the input's end so far and the output's size.
    var outputAfterInput: [(inputEnd: Int, outputCount: Int)] = []
    var result: Result<TransformSummary, GzipError> = .success(TransformSummary())
    var problems: [String] = []
}

extension Observed {
    /// Takes one emitted chunk, and records a chunk out of bounds or output past the limit.
    mutating func record(_ chunk: Chunk, _ plan: FuzzPlan) {
        if chunk.isEmpty || chunk.count > plan.outputChunkSize {
            problems.append("emitted a chunk of \(chunk.count) bytes (output chunk size \(plan.outputChunkSize))")
        }
        output += chunk.bytes
        if output.count > plan.outputLimit {
            problems.append("emitted \(output.count) bytes past the limit of \(plan.outputLimit)")
        }
    }
}

func decodeWithSluice(_ plan: FuzzPlan) async -> Observed {
    var observed = Observed()
    let decoder = GzipDecoder(outputChunkSize: plan.outputChunkSize, outputLimit: Int64(plan.outputLimit))
    let emit: (Chunk) async throws -> Void = { chunk in observed.record(chunk, plan) }
    var finished = false
    do {
        for range in plan.chunks {
            try await decoder.process(Chunk(plan.payload[range]), emit: emit)
            observed.outputAfterInput.append((range.upperBound, observed.output.count))
        }
        finished = true
        observed.result = .success(try await decoder.finish(emit: emit))
    } catch let error as GzipError {
        observed.result = .failure(error)
        // After an error, every later call throws the same error (finish may be called once).
        for call in finished ? [] : ["process", "finish"] {
            do {
                if call == "process" {
                    try await decoder.process(Chunk([1, 2, 3]), emit: emit)
                } else {
                    _ = try await decoder.finish(emit: emit)
                }
                observed.problems.append("\(call) after \(error) did not throw")
            } catch let later as GzipError where later == error {
            } catch {
                observed.problems.append("\(call) after an error threw \(error) instead")
            }
        }
    } catch {
        observed.problems.append("threw a non-GzipError \(error)")
    }
    return observed
}

// MARK: - The reference: zlib's inflate over the whole payload

/// The outcome zlib's own inflate gives under Sluice's documented policy.
enum Verdict: Equatable {
    case accepted(warning: Bool)
    case rejected(GzipError.Kind, offset: Int64?, message: String?)
}

struct Reference {
    var output: [UInt8] = []
    /// Where zlib, given the input up to a chunk's end, stopped for want of more: that end and
    /// the output's size then (what a streaming decoder must have emitted by that point).
    var outputAtStall: [Int: Int] = [:]
    var verdict = Verdict.accepted(warning: false)
}

/// Decodes `payload` with zlib (inflateInit2 with 16 + MAX_WBITS, reset for each member) under
/// the policy of `sluice decompress` (the Command line article): members concatenated; after
/// the last member NUL padding is ignored and other bytes are ignored with a warning, except
/// bytes that begin a new member (`1f`, then `8b`); only gzip with method 8 is accepted. One
/// intentional reading: once NUL padding has begun, everything after it is trailing bytes, even
/// a complete member (as GzipDecoder documents: padding ends the members).
///
/// zlib gets the input up to each chunk's end in turn (`chunks`), so `outputAtStall` says how
/// much output that much input yields; its output does not depend on how the input is split.
func referenceDecode(_ payload: [UInt8], chunks: [Range<Int>], limit: Int) -> Reference {
    var reference = Reference()
    let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    stream.initialize(to: z_stream())
    defer { stream.deinitialize(count: 1); stream.deallocate() }
    guard CZlib_inflateInit2(stream, 16 + MAX_WBITS) == Z_OK else { fatalError("inflateInit2 failed") }
    defer { inflateEnd(stream) }
    var scratch = [UInt8](repeating: 0, count: 64 << 10)
    var position = 0
    var members = 0
    var boundaries = chunks.map(\.upperBound).makeIterator()
    var boundary = boundaries.next() ?? payload.count
    func reject(_ kind: GzipError.Kind, at offset: Int?, _ message: String? = nil) -> Reference {
        reference.verdict = .rejected(kind, offset: offset.map(Int64.init), message: message)
        return reference
    }
    while true {
        let rest = payload.count - position
        if members > 0 {
            if rest == 0 { return reference }
            if payload[position] == 0 {
                reference.verdict = .accepted(warning: payload[position...].contains { $0 != 0 })
                return reference
            }
            if payload[position] != 0x1F || (rest >= 2 && payload[position + 1] != 0x8B) {
                reference.verdict = .accepted(warning: true)
                return reference
            }
        } else if (rest >= 1 && payload[position] != 0x1F) || (rest >= 2 && payload[position + 1] != 0x8B) {
            return reject(.notGzip, at: position)
        }
        if rest >= 3 && payload[position + 2] != 8 {
            return reject(.unknownMethod(payload[position + 2]), at: position + 2)
        }
        let memberStart = position
        guard inflateReset(stream) == Z_OK else { fatalError("inflateReset failed") }
        var memberOutput = 0
        while true {
            while boundary <= position && boundary < payload.count { boundary = boundaries.next() ?? payload.count }
            let end = max(boundary, position)
            let (code, consumed, produced) = payload.withUnsafeBufferPointer { input in
                scratch.withUnsafeMutableBufferPointer { output in
                    stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress.map { $0 + position })
                    stream.pointee.avail_in = UInt32(end - position)
                    stream.pointee.next_out = output.baseAddress
                    stream.pointee.avail_out = UInt32(output.count)
                    let code = inflate(stream, Z_NO_FLUSH)
                    let consumed = end - position - Int(stream.pointee.avail_in)
                    let produced = output.count - Int(stream.pointee.avail_out)
                    stream.pointee.next_in = nil
                    stream.pointee.next_out = nil
                    return (code, consumed, produced)
                }
            }
            position += consumed
            memberOutput += produced
            reference.output += scratch[..<produced]
            if reference.output.count > limit {
                reference.output.removeLast(reference.output.count - limit)
                return reject(.outputLimitExceeded(limit: Int64(limit)), at: nil)
            }
            if code == Z_STREAM_END { break }
            if code == Z_OK && (consumed > 0 || produced > 0) { continue }
            if code == Z_OK || code == Z_BUF_ERROR {
                guard position == end else { fatalError("reference inflate stalled with input left") }
                reference.outputAtStall[end] = reference.output.count
                if end < payload.count { continue }
                return reject(.truncatedInput, at: payload.count)
            }
            let message = stream.pointee.msg.map { String(cString: $0) }
            let stored = position >= 4 ? littleEndian(payload[(position - 4)..<position]) : 0
            switch message {
            case "header crc mismatch":
                return reject(.headerCRCMismatch, at: position - 2, message)
            case "incorrect data check":
                return reject(.crc32Mismatch(expected: stored, actual: UInt32(truncatingIfNeeded: stream.pointee.adler)), at: position - 4, message)
            case "incorrect length check":
                return reject(.sizeMismatch(expected: stored, actual: UInt32(truncatingIfNeeded: memberOutput)), at: position - 4, message)
            case "incorrect header check":
                return reject(.notGzip, at: memberStart, message)
            default:
                return reject(.corruptData, at: nil, message ?? "zlib code \(code)")
            }
        }
        members += 1
    }
}

private func littleEndian(_ bytes: ArraySlice<UInt8>) -> UInt32 {
    bytes.reversed().reduce(0) { $0 << 8 | UInt32($1) }
}

// MARK: - The comparison

func compare(_ observed: Observed, _ expected: Reference, _ plan: FuzzPlan) {
    func fail(_ what: String) -> Never {
        fatalError("GzipDecoder disagrees with zlib: \(what) [payload \(plan.payload.count) bytes, output chunk size \(plan.outputChunkSize), limit \(plan.outputLimit), \(plan.chunks.count) input chunks]")
    }
    if let problem = observed.problems.first { fail(problem) }
    // Output is never held back: what a call's input decodes to is emitted by that call.
    for (inputEnd, outputCount) in observed.outputAfterInput {
        if let decodable = expected.outputAtStall[inputEnd], outputCount != decodable {
            fail("after input byte \(inputEnd) emitted \(outputCount) bytes; zlib decodes \(decodable) from that input")
        }
    }
    switch (observed.result, expected.verdict) {
    case (.success(let summary), .accepted(let warning)):
        if observed.output != expected.output {
            fail("accepted with \(observed.output.count) bytes of output, zlib decodes \(expected.output.count) different bytes")
        }
        let crc = observed.output.withUnsafeBufferPointer { UInt32(truncatingIfNeeded: crc32(0, $0.baseAddress, UInt32($0.count))) }
        if summary.crc32 != crc { fail("summary CRC-32 \(String(describing: summary.crc32)), output's \(crc)") }
        if summary.warnings.count != (warning ? 1 : 0) { fail("warnings \(summary.warnings), trailing bytes: \(warning)") }
    case (.success, .rejected(let kind, _, let message)):
        fail("accepted; zlib rejects: \(kind) \(message ?? "")")
    case (.failure(let error), .accepted):
        fail("rejected (\(error)); zlib accepts with \(expected.output.count) bytes")
    case (.failure(let error), .rejected(let kind, let offset, let message)):
        if error.kind != kind { fail("rejected (\(error)), zlib: \(kind) \(message ?? "")") }
        if let offset, error.offset != offset { fail("rejected (\(error)) at byte \(error.offset), zlib at byte \(offset)") }
        if case .corruptData = kind, error.zlibMessage != message {
            fail("rejected (\(error)), zlib says \(message ?? "nothing")")
        }
        if error.offset < 0 || error.offset > Int64(plan.payload.count) { fail("offset \(error.offset) outside the input") }
        if !expected.output.starts(with: observed.output) {
            fail("output before the error (\(observed.output.count) bytes) is not a prefix of zlib's (\(expected.output.count) bytes)")
        }
    }
}

// MARK: - Running async code from libFuzzer's synchronous callback

private final class Mailbox<Value: Sendable>: @unchecked Sendable {
    var value: Value?
    let done = DispatchSemaphore(value: 0)
}

/// Runs `body` on the cooperative pool and blocks this (libFuzzer's) thread until it returns.
func runBlocking<Value: Sendable>(_ body: @escaping @Sendable () async -> Value) -> Value {
    let mailbox = Mailbox<Value>()
    Task {
        mailbox.value = await body()
        mailbox.done.signal()
    }
    mailbox.done.wait()
    return mailbox.value!
}
