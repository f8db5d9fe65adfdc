/// `count` bytes made from the words `nextWord` returns, each word's bytes low first (the last
/// word cut short). Whole words are stored at once: a debug build's per-byte loop, on a thread
/// of the cooperative pool (two on a 2-core machine), would keep it busy for seconds for tens
/// of megabytes.
public func generatedBytes(count: Int, nextWord: () -> UInt64) -> [UInt8] {
    [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        let raw = UnsafeMutableRawBufferPointer(buffer)
        var index = 0
        while index < count {
            var word = nextWord()
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
