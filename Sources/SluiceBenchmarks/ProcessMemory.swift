#if canImport(Glibc)
import Glibc
#endif

/// Reads this process's memory figures from `/proc/self/status` (proc(5)).
public enum ProcessMemory {
    /// The resident set size now (`VmRSS`), in bytes; 0 if unreadable.
    public static func residentBytes() -> Int64 { field("VmRSS:") }

    /// The peak resident set size so far (`VmHWM`, the kernel's high-water mark), in bytes.
    public static func peakResidentBytes() -> Int64 { field("VmHWM:") }

    private static func field(_ name: String) -> Int64 {
        let descriptor = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return 0 }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(descriptor, &buffer, buffer.count)
        guard count > 0 else { return 0 }
        let text = String(decoding: buffer[..<count], as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            let digits = line.dropFirst(name.count).filter(\.isNumber)
            return (Int64(String(digits)) ?? 0) * 1024
        }
        return 0
    }
}

/// A child for testing the memory measure: allocates and touches a known count of bytes, then
/// reports its own peak (`VmHWM`). `sluice bench-probe SIZE` runs it.
public enum MemoryProbe {
    /// Allocates `bytes`, writes every page, and returns the peak RSS in bytes.
    public static func run(allocating bytes: Int) -> Int64 {
        if bytes > 0 {
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 4096)
            var offset = 0
            while offset < bytes {
                buffer.storeBytes(of: UInt8(truncatingIfNeeded: offset), toByteOffset: offset, as: UInt8.self)
                offset += 4096
            }
            let peak = ProcessMemory.peakResidentBytes()
            buffer.deallocate()
            return peak
        }
        return ProcessMemory.peakResidentBytes()
    }
}
