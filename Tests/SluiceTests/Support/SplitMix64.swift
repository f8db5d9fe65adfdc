/// A small seeded generator (SplitMix64) so that random sequences are reproducible from a
/// printed seed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `count` bytes from a seeded generator, each word's bytes low first. Whole words are stored
/// at once: a debug build's per-byte loop, on a thread of the cooperative pool, would keep it
/// busy for seconds for tens of megabytes.
func randomBytes(count: Int, seed: UInt64) -> [UInt8] {
    var generator = SplitMix64(seed: seed)
    return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        let raw = UnsafeMutableRawBufferPointer(buffer)
        var index = 0
        while index < count {
            var word = generator.next()
            if count - index >= 8 {
                raw.storeBytes(of: word.littleEndian, toByteOffset: index, as: UInt64.self)
                index += 8
                continue
            }
            while index < count {
                raw[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        initialized = count
    }
}
