/// A race-safe, run-once link between a request to stop and a producer's cancellation closure.
///
/// A producer often learns how to stop only after it has started: a callback source returns its
/// cancellation token from the same call that registers it, and by then the consumer may already
/// have gone away. The gate makes both orders safe:
/// - ``install(_:)`` then ``cancel()``: `cancel()` runs the handler.
/// - ``cancel()`` then ``install(_:)``: `install(_:)` runs the handler at once, on its caller's
///   thread.
///
/// Either way the handler runs exactly once, however many times and from however many threads
/// `cancel()` is called.
///
/// ```swift
/// let gate = CancellationGate()
/// continuation.onTermination = { _ in gate.cancel() }   // may fire at any time
/// let token = source.start(onValue: { continuation.yield($0) })
/// gate.install { token.stop() }                         // runs at once if already cancelled
/// ```
///
/// ## Concurrency contract
/// Every method may be called from any thread or task, concurrently; none suspends or blocks
/// beyond a short critical section. The gate's lock (a `pthread_mutex_t`) is never held while the
/// handler runs, so a handler may call back into the gate or into code that takes other locks
/// (for example an `AsyncStream` `onTermination` handler) without deadlocking.
///
/// - Important: A gate takes at most one handler. Installing a second one is a programming
///   error and traps, whether or not the gate was cancelled: a silently replaced handler would
///   leave its producer running.
@usableFromInline
package final class CancellationGate: Sendable {
    /// What the gate knows, guarded by ``state``.
    private struct State {
        /// The installed handler, until it is taken to run.
        var handler: (@Sendable () -> Void)?
        /// Whether ``install(_:)`` was ever called.
        var isInstalled = false
        /// Whether ``cancel()`` was ever called.
        var isCancelled = false
    }

    private let state = LockedValue(State())

    /// Creates a gate that is neither installed nor cancelled.
    @usableFromInline
    package init() {}

    /// Installs the producer's cancellation closure.
    ///
    /// If ``cancel()`` has already been called, `handler` runs at once, synchronously on the
    /// caller's thread, before this method returns; otherwise it is kept and runs during the first
    /// call to ``cancel()``, on that caller's thread. In both cases it runs exactly once and no
    /// lock is held while it runs.
    ///
    /// - Parameter handler: the closure that stops the producer. It must be safe to call from any
    ///   thread.
    /// - Precondition: No handler has been installed on this gate before.
    @usableFromInline
    package func install(_ handler: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            precondition(!state.isInstalled, "CancellationGate.install(_:) called twice")
            state.isInstalled = true
            if state.isCancelled { return true }
            state.handler = handler
            return false
        }
        if runNow { handler() }
    }

    /// Requests cancellation; runs the installed handler if there is one and it has not run yet.
    ///
    /// Idempotent and race-safe: of any number of concurrent and repeated calls, only the first
    /// takes the handler, and it runs the handler after releasing the lock. Calls that find no
    /// handler installed only record the request; ``install(_:)`` then runs the handler.
    @usableFromInline
    package func cancel() {
        let handler = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.isCancelled else { return nil }
            state.isCancelled = true
            defer { state.handler = nil }
            return state.handler
        }
        handler?()
    }

    /// Whether ``cancel()`` has been called.
    ///
    /// Once `true`, stays `true`. The handler may still be running (on another thread) when this
    /// reads `true`.
    @usableFromInline
    package var isCancelled: Bool {
        state.withLock { $0.isCancelled }
    }
}
