/// A conservative test for a block of bytes that deflate cannot make smaller: data that looks
/// random (encrypted data, random numbers, the output of a compressor).
///
/// Deflate spends as much time on such a block as on text (at level 6, 128 instructions per
/// byte of random data against 143 per byte of text, counted with callgrind) and then writes it
/// as stored blocks anyway (RFC 1951 §3.2.4). A block this test accepts can be written stored
/// at once, at the cost of copying it.
///
/// A block is accepted only when both of deflate's means of compression find nothing to use:
/// - **Huffman coding** (the byte frequencies): the block's order-0 entropy is at most
///   0.01 bits per byte short of 8, so no code can save more than 0.125 % of it. Computed
///   without logarithms from Pearson's χ² of the byte histogram against a uniform one: for a
///   block of `n` bytes, `8 - H ≈ χ² / (2 n ln 2)`, so the bound is `χ² ≤ 0.01386 n`. Random
///   bytes give χ² ≈ 255 (its degrees of freedom); a block under 32 KiB rarely passes, which
///   only means it is compressed as usual.
/// - **LZ77 matches** (repeats within deflate's 32 KiB window): every 16th position is entered
///   in a table of 16,384 slots by its next 8 bytes and every position looks its 8 bytes up, so
///   a repeat of 23 bytes or more at a distance deflate can reach is found unless all of its
///   entered positions were overwritten by later ones with the same slot (for a repeat of
///   256 bytes, 15 entries each overwritten with a probability of about 12 %).
///
/// Measured on 2,066 blocks of 256 KiB (system libraries, documentation, gzip files, random
/// bytes): of the 46 blocks it accepted, the one deflate -6 shrank most shrank by 0.066 %; the
/// rest were not made smaller at all.
///
/// The answer depends only on the bytes (integer counts, one correctly rounded comparison), so
/// a compressor that uses it stays deterministic.
///
/// Concurrency: stateless; call it from any thread.
enum IncompressibleData {
    /// The smallest block the test considers: smaller blocks are always reported compressible.
    static let minimumCount = 4 << 10

    /// The farthest back a deflate match reaches in zlib: 32 KiB less its lookahead
    /// (`MAX_DIST`, 32,768 - 262 bytes).
    static let matchDistance = 32_768 - 262

    /// Whether deflate would not make `bytes` smaller (see the type's discussion).
    ///
    /// Cost: one pass over the bytes for the histogram; a second, with one table lookup per
    /// byte, only when the histogram is flat.
    ///
    /// - Parameter bytes: the block.
    /// - Returns: `true` when the block is best written stored; `false` when it may compress.
    static func contains(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= minimumCount && hasFlatHistogram(bytes) && !hasRepeats(bytes)
    }

    /// The bytes a histogram of the block's start covers before the whole block is counted.
    static let sampleCount = 16 << 10

    /// Whether the byte frequencies are within 0.01 bits per byte of uniform (χ² ≤ 0.01386 n).
    ///
    /// The first ``sampleCount`` bytes are counted first, against a bound ten times looser
    /// (random bytes give about 255 against a bound of 2,271 for 16 KiB): a block of text fails
    /// there, after a sixteenth of its bytes for 256 KiB.
    static func hasFlatHistogram(_ bytes: UnsafeRawBufferPointer) -> Bool {
        // Four tables, so consecutive bytes rarely increment the same counter.
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 1_024) { counts in
            counts.initialize(repeating: 0)
            let sample = min(sampleCount, bytes.count)
            count(bytes, in: 0..<sample, into: counts)
            guard isFlat(counts, count: sample, bitsShort: 0.1) else { return false }
            count(bytes, in: sample..<bytes.count, into: counts)
            return isFlat(counts, count: bytes.count, bitsShort: 0.01)
        }
    }

    /// Adds the bytes in `range` to the four tables of `counts`, 8 bytes per load.
    private static func count(
        _ bytes: UnsafeRawBufferPointer, in range: Range<Int>, into counts: UnsafeMutableBufferPointer<UInt32>
    ) {
        let base = counts.baseAddress!
        var index = range.lowerBound
        while index + 8 <= range.upperBound {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            base[Int(truncatingIfNeeded: word & 0xFF)] &+= 1
            base[256 + Int(truncatingIfNeeded: (word >> 8) & 0xFF)] &+= 1
            base[512 + Int(truncatingIfNeeded: (word >> 16) & 0xFF)] &+= 1
            base[768 + Int(truncatingIfNeeded: (word >> 24) & 0xFF)] &+= 1
            base[Int(truncatingIfNeeded: (word >> 32) & 0xFF)] &+= 1
            base[256 + Int(truncatingIfNeeded: (word >> 40) & 0xFF)] &+= 1
            base[512 + Int(truncatingIfNeeded: (word >> 48) & 0xFF)] &+= 1
            base[768 + Int(truncatingIfNeeded: word >> 56)] &+= 1
            index += 8
        }
        while index < range.upperBound {
            base[Int(bytes[index])] &+= 1
            index += 1
        }
    }

    /// Whether counts of `count` bytes are within `bitsShort` bits per byte of a uniform
    /// entropy of 8: `χ² ≤ 2 ln 2 × bitsShort × n`, with `χ² = (256 Σ c² - n²) / n`; both sides
    /// times `n`, in `Double` (`256 Σ c²` can pass 2^63).
    private static func isFlat(_ counts: UnsafeMutableBufferPointer<UInt32>, count: Int, bitsShort: Double) -> Bool {
        var sumOfSquares = 0
        for value in 0..<256 {
            let total = Int(counts[value]) + Int(counts[256 + value]) + Int(counts[512 + value]) + Int(counts[768 + value])
            sumOfSquares += total * total
        }
        let n = Double(count)
        return 256 * Double(sumOfSquares) - n * n <= 2 * 0.693_147_180_559_945_3 * bitsShort * n * n
    }

    /// Whether some 8 bytes recur within ``matchDistance`` of an earlier position entered in
    /// the table (every 16th).
    static func hasRepeats(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let slotBits = 14
        return withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 1 << slotBits) { slots in
            // A slot holds an entered position + 1; 0 is empty.
            slots.initialize(repeating: 0)
            let last = bytes.count - 8
            var position = 0
            while position <= last {
                let key = bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self)
                let slot = Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - slotBits))
                let entry = Int(slots[slot])
                if entry != 0 {
                    let earlier = entry - 1
                    if position - earlier <= matchDistance,
                        bytes.loadUnaligned(fromByteOffset: earlier, as: UInt64.self) == key
                    {
                        return true
                    }
                }
                if position & 15 == 0 {
                    slots[slot] = UInt32(truncatingIfNeeded: position + 1)
                }
                position += 1
            }
            return false
        }
    }
}
