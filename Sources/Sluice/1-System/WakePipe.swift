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
        while true {
            switch try wait(for: descriptor, timeout: nil) {
            case .readable: return true
            case .signalled where endsOnSignal(): return false
            case .signalled, .timedOut: continue
            }
        }
    }

    /// What ended a ``wait(for:timeout:)``.
    enum WaitOutcome: Equatable {
        case readable, signalled, timedOut
    }

    /// Blocks until `descriptor` is readable (or at end, or in error), a ``signal()`` comes (it
    /// is consumed: ``WaitOutcome/signalled`` first when both happened), or `timeout` passes
    /// (`nil`: never; rounded up to a millisecond). Retries `EINTR`.
    ///
    /// - Parameter descriptor: the descriptor to wait for; `nil` waits for a signal or the time.
    /// - Throws: the ``ErrorNumber`` of a failed `poll(2)`.
    func wait(for descriptor: CInt?, timeout: Duration?) throws(ErrorNumber) -> WaitOutcome {
        var fds = [
            pollfd(fd: readEnd.rawValue, events: Int16(POLLIN), revents: 0),
            pollfd(fd: descriptor ?? -1, events: Int16(POLLIN), revents: 0),
        ]
        let milliseconds = timeout.map { CInt(max(0, min(($0 / .milliseconds(1)).rounded(.up), Double(CInt.max)))) } ?? -1
        let ready = try ErrorNumber.retryingInterrupts { poll(&fds, 2, milliseconds) }
        if ready == 0 { return .timedOut }
        if fds[0].revents != 0 {
            consumeSignals()
            return .signalled
        }
        return .readable
    }

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
