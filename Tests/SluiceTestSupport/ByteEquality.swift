#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Byte arrays compared with `memcmp(3)`. The standard library's `==` on `[UInt8]` is generic
// over `Equatable` elements and, in a debug build, calls `UInt8.==` once per byte through a
// witness table: about 10 ns a byte, 0.3 s for 32 MiB, on a thread of the cooperative pool
// (2 threads on a 2-core machine) where a test's `#expect(contents == data)` runs. These
// overloads, more specific than the generic one, are chosen wherever both sides are byte
// arrays in a file that imports this module, and compare at memory speed.

/// Whether the two byte arrays are equal, by `memcmp(3)`.
public func == (lhs: [UInt8], rhs: [UInt8]) -> Bool {
    guard lhs.count == rhs.count else { return false }
    return lhs.withUnsafeBytes { left in
        rhs.withUnsafeBytes { right in left.count == 0 || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0 }
    }
}

/// Whether the two byte arrays are both `nil` or equal, by `memcmp(3)`.
public func == (lhs: [UInt8]?, rhs: [UInt8]?) -> Bool {
    switch (lhs, rhs) {
    case (nil, nil): true
    case (let left?, let right?): left == right
    default: false
    }
}

/// Whether the two byte arrays differ, by `memcmp(3)`.
public func != (lhs: [UInt8], rhs: [UInt8]) -> Bool { !(lhs == rhs) }

/// Whether the two byte arrays differ (one `nil` and not the other, or unequal), by `memcmp(3)`.
public func != (lhs: [UInt8]?, rhs: [UInt8]?) -> Bool { !(lhs == rhs) }
