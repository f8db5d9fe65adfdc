import CDeflate

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
    public internal(set) var value: UInt32

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
}
