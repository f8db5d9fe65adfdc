#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Sluice

/// The real system calls, except that a write covering the file offset `offset` writes that
/// byte inverted: a write that "succeeds" with the wrong data, as a faulty device or driver
/// would store it. The offset is the descriptor's file position (`lseek(2)`) at the write.
///
/// Gathered writes go through `write`, one buffer at a time (``SystemCalls``' default), so
/// every byte passes here.
package func systemCallsCorruptingWrites(atOffset offset: Int64) -> SystemCalls {
    let live = SystemCalls.live
    return SystemCalls(
        read: live.read,
        write: { descriptor, buffer, count in
            let position = lseek(descriptor, 0, SEEK_CUR)
            guard position >= 0, offset >= Int64(position), offset < Int64(position) + Int64(count) else {
                return live.write(descriptor, buffer, count)
            }
            var bytes = [UInt8](UnsafeRawBufferPointer(start: buffer, count: count))
            bytes[Int(offset - Int64(position))] ^= 0xFF
            return bytes.withUnsafeBytes { live.write(descriptor, $0.baseAddress!, count) }
        },
        fsync: live.fsync)
}
