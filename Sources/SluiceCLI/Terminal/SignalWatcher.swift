#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Sluice
import Synchronization

/// The write end of the self-pipe that the signal handler writes to (async-signal-safe).
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

/// Turns SIGINT, SIGTERM, SIGHUP and SIGQUIT into a cancellation of the running command, then an
/// exit with status 128 + the signal number, with every temporary file removed.
///
/// A `sigaction(2)` handler writes the signal number to a pipe (the only thing it does, and
/// async-signal-safe); a dedicated thread reads the pipe, cancels the command's task and gives
/// it a grace period to clean up; if the command is stuck in a call that cancellation cannot
/// reach (an `open(2)` of a FIFO waiting for its writer), the thread removes the registered
/// temporary files and exits itself. A second signal exits at once, after the same removal.
/// (`DispatchSource` signal sources do not fire for ignored signals on Linux, and blocking a
/// signal works only if every thread blocks it: hence the handler.) SIGPIPE is ignored, so a
/// closed output pipe shows up as `EPIPE` from `write(2)`.
final class SignalWatcher: Sendable {
    private let state = Mutex<(signal: Int32?, cancel: (@Sendable () -> Void)?)>((nil, nil))
    private let gracePeriod: Double

    /// The first signal received, if any.
    var receivedSignal: Int32? { state.withLock { $0.signal } }

    /// Installs the handlers and starts the watcher thread. Call once, early in `main`.
    init(gracePeriod: Double = 0.5) {
        self.gracePeriod = gracePeriod
        signal(SIGPIPE, SIG_IGN)
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return }
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        signalPipeWriteEnd = ends[1]
        for number in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(signalPipeWriteEnd, &byte, 1)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            sigaction(number, &action, nil)
        }
        let readEnd = ends[0]
        let thread = Thread { [self] in self.watch(readEnd) }
        thread.name = "sluice.signals"
        thread.start()
    }

    /// Sets what a signal cancels (the command's task).
    func onSignal(_ cancel: @escaping @Sendable () -> Void) {
        let pending = state.withLock { state -> Bool in
            state.cancel = cancel
            return state.signal != nil
        }
        if pending { cancel() }
    }

    private func watch(_ readEnd: Int32) {
        var byte: UInt8 = 0
        while true {
            let count = read(readEnd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1 else { return }
            let number = Int32(byte)
            let (first, cancel) = state.withLock { state in
                let first = state.signal == nil
                if first { state.signal = number }
                return (first, state.cancel)
            }
            guard first else { Self.exitAfterCleanup(number) }
            cancel?()
            let deadline = Date().addingTimeInterval(gracePeriod)
            let grace = Thread {
                Thread.sleep(until: deadline)
                Self.exitAfterCleanup(number)
            }
            grace.start()
        }
    }

    private static func exitAfterCleanup(_ number: Int32) -> Never {
        TemporaryFiles.shared.removeAll()
        _exit(ExitStatus.signal(number))
    }
}
