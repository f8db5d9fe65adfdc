import CDeflate
import CZlib

/// A running CRC-32 (ISO 3309, the check value of a gzip member's trailer, RFC 1952 §8).
///
/// Feed the bytes in order with ``update(_:)-(UnsafeRawBufferPointer)`` and read ``value`` at any point; splitting the
/// input differently never changes the result. The computation is libdeflate's
/// `libdeflate_crc32` (carry-less multiplication where the processor has it; its speed against
/// zlib's `crc32` is in `benchmarks/README.md`); two CRC-32s are combined by zlib's
/// `crc32_combine`.
///
/// ```swift
/// var crc = CRC32()
/// chunk.withUnsafeBytes { crc.update($0) }
/// print(crc) // 8 lowercase hexadecimal digits, as `gzip -lv` prints a member's CRC
/// ```
///
/// Concurrency: a plain value; `Sendable`. Each copy runs independently.
public struct CRC32: Sendable, Hashable, CustomStringConvertible {
    /// The CRC-32 of every byte passed to ``update(_:)-(UnsafeRawBufferPointer)`` so far; `0` for no bytes.
    public private(set) var value: UInt32

    /// Creates a CRC-32 of no bytes (value `0`).
    public init() {
        value = 0
    }

    /// Creates a CRC-32 that continues from `value`: the CRC-32 of bytes already checked, as
    /// a gzip trailer or ``CopyReport/crc32`` gives it.
    public init(value: UInt32) {
        self.value = value
    }

    /// The ``value`` as 8 lowercase hexadecimal digits (`%08x`), as `gzip -lv` lists a member's
    /// CRC: the one spelling of a CRC-32 in Sluice's messages.
    public var description: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// Creates a CRC-32 of `bytes`.
    ///
    /// - Parameter bytes: the bytes to checksum.
    package init(_ bytes: some Sequence<UInt8>) {
        self.init()
        update(bytes)
    }

    /// Adds `bytes` to the checksum.
    ///
    /// - Parameter bytes: the next bytes, in order; may be empty and of any length.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        value = libdeflate_crc32(value, base, bytes.count)
    }

    /// Adds `bytes` to the checksum.
    ///
    /// - Parameter bytes: the next bytes, in order.
    package mutating func update(_ bytes: some Sequence<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { self.update(UnsafeRawBufferPointer($0)) }
        if done == nil {
            let copy = Array(bytes)
            copy.withUnsafeBytes { self.update($0) }
        }
    }

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
