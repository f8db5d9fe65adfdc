#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Read-only memory that reads as zeros and costs no RAM: an anonymous private mapping that is
/// never written, so every page of it is the kernel's one zero page (mmap(2)). The bytes of a
/// hole chunk (``Chunk/hole(count:)``) point into it, so whoever reads a hole (a pipe, a
/// compression, a CRC-32) reads zeros with no buffer filled.
///
/// The region grows by mapping a larger one when a longer run is asked for; older regions stay
/// mapped (chunks may still point into them). Concurrency: thread-safe, behind a lock.
enum ZeroRegion {
    private struct Region {
        var base: UnsafeRawPointer
        var count: Int
    }

    private static let current = LockedValue<Region?>(nil)

    /// The smallest region mapped: 4 MiB (a default chunk of 1 MiB, and room).
    private static let minimumCount = 4 << 20

    /// The start of at least `count` bytes of zeros, valid for the life of the process.
    ///
    /// - Precondition: `count >= 0`; the mapping succeeds (address space, not memory).
    static func zeros(count: Int) -> UnsafeRawPointer {
        current.withLock { region in
            if let region, region.count >= count { return region.base }
            var size = max(minimumCount, region.map { $0.count * 2 } ?? 0)
            while size < count { size *= 2 }
            let mapped = mmap(nil, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
            guard let mapped, mapped != MAP_FAILED else {
                preconditionFailure("cannot map \(size) bytes of zeros: \(ErrorNumber.current)")
            }
            region = Region(base: UnsafeRawPointer(mapped), count: size)
            return UnsafeRawPointer(mapped)
        }
    }

    /// Whether the `count` bytes at `bytes` are all zero (`memcmp(3)` against the region: the
    /// C library's vectorised compare).
    static func isZero(_ bytes: UnsafeRawPointer, count: Int) -> Bool {
        count == 0 || memcmp(bytes, zeros(count: count), count) == 0
    }
}
