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
/// mapped (chunks may still point into them). Runs of at most ``smallCount`` bytes (a CRC-32 of
/// zeros, a block compared with zeros) read ``small`` instead, which is always there.
/// Concurrency: thread-safe, behind a lock.
enum ZeroRegion {
    /// The length of ``small``: 64 KiB.
    static let smallCount = 64 << 10

    /// ``smallCount`` bytes of zeros in the process's own memory, allocated at first use.
    /// (`nonisolated(unsafe)`: a pointer is not `Sendable`, but these bytes are written once,
    /// before the pointer is published, and only read afterwards.)
    nonisolated(unsafe) static let small: UnsafeRawPointer = {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: smallCount, alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0, count: smallCount)
        return UnsafeRawPointer(buffer)
    }()

    private struct Region {
        var base: UnsafeRawPointer
        var count: Int
    }

    private static let current = LockedValue<Region?>(nil)

    /// The smallest region mapped: 4 MiB (a default chunk of 1 MiB, and room).
    private static let minimumCount = 4 << 20

    /// The start of at least `count` bytes of zeros, valid for the life of the process.
    ///
    /// - Precondition: `count >= 0`.
    /// - Throws: ``FileError`` (`mmap`, `ENOMEM`) when the address space for them cannot be
    ///   mapped (`ulimit -v`): a mapping takes address space, not memory.
    static func zeros(count: Int) throws(FileError) -> UnsafeRawPointer {
        precondition(count >= 0, "count must not be negative")
        if count <= smallCount { return small }
        return try current.withLock { (region) throws(FileError) -> UnsafeRawPointer in
            if let region, region.count >= count { return region.base }
            var size = max(minimumCount, region.map { $0.count * 2 } ?? 0)
            while size < count { size *= 2 }
            let mapped = mmap(nil, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
            guard let mapped, mapped != MAP_FAILED else { throw FileError.outOfMemory(.mmap, bytes: size) }
            region = Region(base: UnsafeRawPointer(mapped), count: size)
            return UnsafeRawPointer(mapped)
        }
    }

    /// Whether the `count` bytes at `bytes` are all zero (`memcmp(3)` against ``small``, a
    /// piece at a time: the C library's vectorised compare).
    static func isZero(_ bytes: UnsafeRawPointer, count: Int) -> Bool {
        var offset = 0
        while offset < count {
            let length = min(smallCount, count - offset)
            guard memcmp(bytes + offset, small, length) == 0 else { return false }
            offset += length
        }
        return true
    }
}
