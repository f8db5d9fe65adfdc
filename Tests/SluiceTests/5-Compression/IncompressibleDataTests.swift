import SluiceTestSupport
import Testing
@testable import Sluice

private func isIncompressible(_ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { IncompressibleData.contains($0) }
}

/// Random bytes with `count` bytes at `target` replaced by the bytes at `source`.
private func random(count: Int, copying length: Int = 0, from source: Int = 0, to target: Int = 0) -> [UInt8] {
    var bytes = randomBytes(count: count, seed: 0xC0FFEE)
    if length > 0 {
        bytes.replaceSubrange(target..<(target + length), with: bytes[source..<(source + length)])
    }
    return bytes
}

struct IncompressibleDataTests {
    @Test func randomBytesAreIncompressible() {
        #expect(isIncompressible(random(count: 256 << 10)))
        #expect(isIncompressible(random(count: 32 << 10)))
    }

    /// Deflate's own output is random-looking: compressing it again gains nothing.
    @Test func compressedDataIsIncompressible() async throws {
        let compressed = try await gzipped(sampleData(count: 4 << 20))
        #expect(compressed.count > 256 << 10)
        #expect(isIncompressible(Array(compressed.prefix(256 << 10))))
    }

    @Test func textAndRunsCompress() {
        #expect(!isIncompressible(sampleData(count: 256 << 10)))
        #expect(!isIncompressible([UInt8](repeating: 0, count: 256 << 10)))
    }

    /// Every byte value equally often, as in random data, but a repeat every 256 bytes.
    @Test func aFlatHistogramWithRepeatsCompresses() {
        let counter = (0..<(256 << 10)).map { UInt8(truncatingIfNeeded: $0) }
        #expect(counter.withUnsafeBytes { IncompressibleData.hasFlatHistogram($0) })
        #expect(!isIncompressible(counter))
    }

    /// Random blocks of 30 KiB, each written twice: flat frequencies, and half the bytes a
    /// match 30 KiB back, which deflate reaches.
    @Test func randomDataRepeatedWithinTheWindowCompresses() {
        let part = randomBytes(count: 30 << 10, seed: 7)
        let repeated = Array((0..<4).map { _ in part + part }.joined())
        #expect(repeated.withUnsafeBytes { IncompressibleData.hasFlatHistogram($0) })
        #expect(!isIncompressible(repeated))
    }

    /// One repeat of 64 bytes, 20,000 bytes back, in 256 KiB of random bytes is found; the same
    /// repeat 40,000 bytes back is out of deflate's reach and does not count.
    @Test func oneShortRepeatIsFoundWhereDeflateCanReachIt() {
        #expect(!isIncompressible(random(count: 256 << 10, copying: 64, from: 100_000, to: 120_000)))
        #expect(isIncompressible(random(count: 256 << 10, copying: 64, from: 100_000, to: 140_000)))
    }

    @Test func smallBlocksAreLeftToDeflate() {
        #expect(!isIncompressible(random(count: IncompressibleData.minimumCount - 1)))
        #expect(!isIncompressible([]))
    }

    /// Random bytes with a little text in them: the histogram is no longer flat.
    @Test func randomBytesWithSomeTextCompress() {
        var bytes = random(count: 256 << 10)
        bytes.replaceSubrange(1_000..<9_000, with: sampleData(count: 8_000))
        #expect(!isIncompressible(bytes))
    }
}
