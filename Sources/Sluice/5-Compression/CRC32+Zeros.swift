import CZlib

/// The CRC-32 of zeros not read (a hole) and of two runs joined, from zlib's `crc32_combine`.
extension CRC32 {
    /// Adds `count` zero bytes to the checksum (a hole) without reading them: the CRC-32 of the
    /// zeros comes from the CRC-32 of one block of zeros, doubled with `crc32_combine`
    /// (O(log count) steps), then combined with the value so far.
    ///
    /// - Parameter count: how many zeros (>= 0).
    package mutating func update(zeros count: Int64) {
        precondition(count >= 0, "negative count")
        guard count > 0 else { return }
        value = Self.combine(value, Self.zeros(count), secondLength: count)
    }

    /// The CRC-32 of `count` zero bytes.
    static func zeros(_ count: Int64) -> UInt32 {
        let block: Int64 = 4096
        var result = CRC32()
        let remainder = Int(count % block)
        // Whole blocks: the CRC-32 of 2^k blocks, doubled, taken where `count / block` has a bit.
        var power = CRC32(UnsafeRawBufferPointer(start: ZeroRegion.small, count: Int(block))).value
        var powerLength = block
        var blocks = count / block
        while blocks > 0 {
            if blocks & 1 == 1 { result.value = combine(result.value, power, secondLength: powerLength) }
            blocks >>= 1
            if blocks > 0 {
                power = combine(power, power, secondLength: powerLength)
                powerLength *= 2
            }
        }
        result.update(UnsafeRawBufferPointer(start: ZeroRegion.small, count: remainder))
        return result.value
    }

    /// The CRC-32 of the concatenation of two byte runs, from their CRC-32s (zlib's
    /// `crc32_combine`).
    ///
    /// - Parameters:
    ///   - first: the CRC-32 of the first run.
    ///   - second: the CRC-32 of the second run.
    ///   - secondLength: the second run's length in bytes (>= 0).
    static func combine(_ first: UInt32, _ second: UInt32, secondLength: Int64) -> UInt32 {
        precondition(secondLength >= 0, "negative length")
        return UInt32(truncatingIfNeeded: crc32_combine(uLong(first), uLong(second), .init(secondLength)))
    }
}
