import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A self-pipe that wakes a thread blocked in `poll(2)`: the way a cancellation reaches a
/// read that waits on an idle pipe, FIFO or terminal.
///
/// ``signal()`` is safe from any thread (one non-blocking `write(2)` of one byte; it never
/// blocks and takes no lock). Both descriptors are closed when the last reference goes away,
/// so a cancellation handler that holds a reference can never write to a reused descriptor.
final class WakePipe: Sendable {
    /// The end that `poll(2)` watches.
    let readEnd: Descriptor
    private let writeEnd: Descriptor

    /// - Throws: ``FileError`` (operation `pipe2`) when the process is out of descriptors.
    init() throws(FileError) {
        var ends: [CInt] = [-1, -1]
        // pipe2(2): close-on-exec from the start, so a concurrent posix_spawn cannot inherit it.
        guard pipe2(&ends, O_CLOEXEC | O_NONBLOCK) == 0 else { throw .pipe2(errno: .current) }
        readEnd = Descriptor(rawValue: ends[0])
        writeEnd = Descriptor(rawValue: ends[1])
    }

    /// Makes ``readEnd`` readable until a wait consumes the signal (see
    /// ``waitUntilReadable(_:endsOnSignal:)``).
    func signal() {
        // A full pipe (EAGAIN) already holds a signal: nothing is lost.
        var byte: UInt8 = 1
        _ = withUnsafeBytes(of: &byte) { try? writeEnd.write(from: $0) }
    }

    /// Blocks until `descriptor` is readable (or at end, or in error): `true`; or until a
    /// ``signal()`` for which `endsOnSignal()` answers `true`: `false`. Retries `EINTR`.
    ///
    /// The wait consumes every signal it sees, so a signal ends at most the wait it was meant
    /// for: a signal for which `endsOnSignal()` answers `false` (left by a cancellation whose
    /// read had already returned) is discarded and the wait goes on. `endsOnSignal` runs on the
    /// caller's thread, after the signal is consumed.
    ///
    /// - Parameters:
    ///   - descriptor: the descriptor to wait for.
    ///   - endsOnSignal: whether a signal ends this wait (for a read: its task is cancelled).
    /// - Throws: the ``ErrorNumber`` of a failed `poll(2)`.
    func waitUntilReadable(_ descriptor: CInt, endsOnSignal: () -> Bool) throws(ErrorNumber) -> Bool {
        var fds = [
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: readEnd.rawValue, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            _ = try ErrorNumber.retryingInterrupts { poll(&fds, 2, -1) }
            if fds[1].revents != 0 {
                consumeSignals()
                if endsOnSignal() { return false }
            }
            if fds[0].revents != 0 { return true }
        }
    }

    /// Reads every pending signal byte (the read end is non-blocking).
    private func consumeSignals() {
        var bytes = (UInt64(0), UInt64(0))
        // Until the pipe is empty (EAGAIN) or fails.
        while (withUnsafeMutableBytes(of: &bytes) { try? readEnd.read(into: $0) } ?? 0) > 0 {}
    }

    deinit {
        try? readEnd.close()
        try? writeEnd.close()
    }
}
