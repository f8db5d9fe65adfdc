#if canImport(Glibc)
import Glibc
#endif
import CSluiceShims
import Dispatch
import Sluice
import Synchronization

/// Takes SIGINT, SIGTERM, SIGHUP and SIGQUIT for the ``CommitGate`` and turns the first into a
/// cancellation of the running command, then an exit with status 128 + the signal number.
///
/// The signals are blocked in every thread (``blockSignals()``, the first statement of `main`,
/// while it is the only thread: every thread inherits the mask), so a signal stays pending until
/// it is taken from a `signalfd(2)`, and only under the gate's lock: by this watcher's thread
/// when the descriptor becomes readable, or by a ``FileSink`` at its commit point. A signal
/// generated before a file's rename therefore always aborts that file, even when the reader
/// saw the end of input that the same Ctrl-C caused (a handler that sets a flag cannot promise
/// that: the signal can still be undelivered when the commit goes ahead).
///
/// After the first signal the command is cancelled and has a grace period to clean up; if it
/// is stuck in a call that cancellation cannot reach, the watchdog removes every temporary file
/// still before its commit point, lets the directory `fsync(2)` of files already renamed finish,
/// names them, and exits. A second signal exits at once, after the same removal. A signal
/// that Sluice was started with ignored (`nohup`, a background job of a shell without job
/// control) stays ignored, as in `gzip`. SIGPIPE is ignored, so a closed output pipe shows up
/// as `EPIPE` from `write(2)`.
final class SignalWatcher: Sendable {
    /// The signals that interrupt a command: SIGINT, SIGTERM, SIGHUP and SIGQUIT, less those
    /// the process was started with ignored (`nohup` ignores SIGHUP; a shell without job
    /// control starts background jobs with SIGINT and SIGQUIT ignored). Read once, first in
    /// `main`: a blocked signal is never discarded, so blocking an ignored one would take it.
    static let signals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT].filter { number in
        var current = sigaction()
        return sigaction(number, nil, &current) != 0
            || unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) != unsafeBitCast(SIG_IGN, to: Int.self)
    }

    private let gate: CommitGate
    private let gracePeriod: Double

    /// Blocks ``signals`` in the calling thread (`pthread_sigmask(2)`). Call it first in `main`,
    /// before any other thread exists; processes Sluice starts get an empty mask back
    /// (``ChildProcess``).
    static func blockSignals() {
        var set = signalSet()
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    private static func signalSet() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for number in signals { sigaddset(&set, number) }
        return set
    }

    /// Opens the `signalfd(2)`, installs it as `gate`'s signal source and starts the watcher
    /// thread. Call once, early in `main`, after ``blockSignals()``.
    init(gate: CommitGate = .shared, gracePeriod: Double = 0.5) {
        self.gate = gate
        self.gracePeriod = gracePeriod
        signal(SIGPIPE, SIG_IGN)
        var set = Self.signalSet()
        let descriptor = signalfd(-1, &set, CSluiceShims_SFD_NONBLOCK | CSluiceShims_SFD_CLOEXEC)
        guard descriptor >= 0 else {
            Console.message("cannot watch for signals: signalfd: \(String(cString: strerror(errno)))")
            return
        }
        gate.setSignalSource {
            // struct signalfd_siginfo is 128 bytes; ssi_signo (uint32) comes first. On the stack:
            // every commit point asks, and almost always finds nothing (EAGAIN).
            withUnsafeTemporaryAllocation(byteCount: 128, alignment: 8) { info -> Int32? in
                guard read(descriptor, info.baseAddress, info.count) == info.count else { return nil }
                return Int32(bitPattern: info.load(as: UInt32.self))
            }
        }
        DedicatedThread.start(name: "sluice.signals") { [self] in self.watch(descriptor) }
    }

    private func watch(_ descriptor: Int32) {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&poller, 1, -1)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return }
            switch gate.receivePendingSignal() {
            case nil: continue  // a commit point took it first
            case .first: continue  // the gate's interruption handler cancels and starts the grace period
            case .repeated: exitNow()
            }
        }
    }

    /// Starts the watchdog: after the grace period, exit whatever the command is doing.
    /// Called by the gate's interruption handler, on the thread that took the first signal.
    func startGracePeriod() {
        let deadline = ContinuousClock.now + .seconds(gracePeriod)
        let gate = self.gate
        DedicatedThread.start(name: "sluice.signal-watchdog") {
            DedicatedThread.sleep(until: deadline)
            let written = gate.removeUncommitted()
            gate.waitForCommittedFiles()
            Self.exit(gate, written: written)
        }
    }

    private func exitNow() -> Never {
        Self.exit(gate, written: gate.removeUncommitted())
    }

    private static func exit(_ gate: CommitGate, written: [Pathname]) -> Never {
        for destination in written { reportWritten(destination) }
        _exit(ExitStatus.signal(gate.interruption ?? SIGINT))
    }

    /// Says that `destination` was committed before the interruption (it holds the new bytes),
    /// once, whether the command or the watchdog gets there first.
    ///
    /// The message is written under the lock, so a caller that finds it already reported (the
    /// watchdog, about to `_exit`) returns only once it is on standard error: the process never
    /// ends between the first caller's claim and its write.
    static func reportWritten(_ destination: Pathname) {
        reported.withLock { reported in
            guard reported.insert(destination).inserted else { return }
            Console.message("'\(destination)' was written before the interruption")
        }
    }

    private static let reported = Mutex<Set<Pathname>>([])
}
