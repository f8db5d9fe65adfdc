import Foundation
import SluiceTestSupport
import Testing
@testable import Sluice

/// What a transform emitted for one input.
struct TransformRun {
    var output: [UInt8] = []
    var outputCount = 0
    var largestChunk = 0
    var chunkCounts: [Int] = []
    var summary = TransformSummary()
}

/// Feeds `input` to `transform` in chunks of `chunkSize` bytes, then finishes it, collecting
/// what it emits (the bytes only when `collect` is true). Runs on a thread of its own: zlib
/// does not suspend, and seconds of it on the cooperative pool (2 threads on 2 cores) would
/// stall every other test.
func drive<T: ChunkTransform>(
    _ transform: T, _ input: [UInt8], chunkSize: Int, collect: Bool = true
) async throws -> TransformRun {
    try await withTaskExecutorPreference(BlockingIOExecutor(label: "test.transform")) {
        try await driveHere(transform, input, chunkSize: chunkSize, collect: collect)
    }
}

private func driveHere<T: ChunkTransform>(
    _ transform: T, _ input: [UInt8], chunkSize: Int, collect: Bool
) async throws -> TransformRun {
    var transform = transform
    var run = TransformRun()
    var start = 0
    repeat {
        let end = min(start + chunkSize, input.count)
        try await transform.process(Chunk(Array(input[start..<end]))) { chunk in
            run.record(chunk, collect: collect)
        }
        start = end
    } while start < input.count
    run.summary = try await transform.finish { chunk in
        run.record(chunk, collect: collect)
    }
    return run
}

extension TransformRun {
    mutating func record(_ chunk: Chunk, collect: Bool) {
        if collect { output += chunk.bytes }
        outputCount += chunk.count
        largestChunk = max(largestChunk, chunk.count)
        chunkCounts.append(chunk.count)
    }
}

/// Compresses `data` with ``GzipEncoder``.
func gzipped(_ data: [UInt8], level: CompressionLevel = .default) async throws -> [UInt8] {
    try await drive(GzipEncoder(level: level), data, chunkSize: 1 << 20).output
}

/// Decodes `data` with ``GzipDecoder`` and returns the error it throws, if any.
func decodingError(_ data: [UInt8], chunkSize: Int = 4096) async -> GzipError? {
    do {
        _ = try await drive(GzipDecoder(), data, chunkSize: chunkSize)
        return nil
    } catch let error as GzipError {
        return error
    } catch {
        Issue.record("unexpected error \(error)")
        return nil
    }
}

/// Deterministic test data: text lines, random bytes and runs of zeros, from a seed. Made once
/// per count and seed and kept: a debug build makes it a line at a time, about a second for
/// 8 MiB, on a thread of the cooperative pool, and parameterised tests ask for the same again.
func sampleData(count: Int, seed: UInt64 = 0x5EED) -> [UInt8] {
    let key = SampleDataKey(count: count, seed: seed)
    if let made = sampleDataMade.withLock({ $0[key] }) { return made }
    let data = makeSampleData(count: count, seed: seed)
    sampleDataMade.withLock { $0[key] = data }
    return data
}

private struct SampleDataKey: Hashable {
    var count: Int
    var seed: UInt64
}

/// What ``sampleData(count:seed:)`` made, by count and seed.
private let sampleDataMade = LockedValue<[SampleDataKey: [UInt8]]>([:])

private func makeSampleData(count: Int, seed: UInt64) -> [UInt8] {
    var generator = SplitMix64(seed: seed)
    var data: [UInt8] = []
    data.reserveCapacity(count + 4096)
    let words = ["sluice", "chunk", "gzip", "member", "backpressure", "channel", "the", "of", "and", "stream"]
    while data.count < count {
        switch generator.next() % 4 {
        case 0, 1:
            var line = "line \(data.count):"
            for _ in 0..<(5 + generator.next() % 10) {
                line += " " + words[Int(generator.next() % UInt64(words.count))]
            }
            data += Array((line + "\n").utf8)
        case 2:
            for _ in 0..<(generator.next() % 512) { data.append(UInt8(truncatingIfNeeded: generator.next())) }
        default:
            data += [UInt8](repeating: 0, count: Int(generator.next() % 300))
        }
    }
    return Array(data.prefix(count))
}
