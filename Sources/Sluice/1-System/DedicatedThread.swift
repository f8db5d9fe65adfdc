import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A thread of its own for a closure that blocks (`poll(2)`, `wait4(2)`, a sleep), so that
/// blocking never holds a thread of Swift's cooperative pool.
///
/// The thread is created detached with `pthread_create(3)`: nothing joins it, and it ends when
/// the closure returns. It starts with the signal mask of the thread that starts it, as any
/// POSIX thread does, so signals a program blocked before starting it stay blocked there.
///
/// Concurrency: ``start(name:_:)`` and ``sleep(until:)`` may be called from any thread.
package enum DedicatedThread {
    /// Runs `body` on a new detached thread named `name`.
    ///
    /// - Parameters:
    ///   - name: the thread's name as `ps -L` and debuggers show it; only its first 15 bytes
    ///     are kept (`pthread_setname_np(3)`).
    ///   - body: what the thread runs; it may block.
    /// - Precondition: the thread can be created (`pthread_create(3)` fails only when the
    ///   process is out of threads or memory).
    package static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { context in
            Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        precondition(status == 0, "pthread_create failed: \(ErrorNumber(rawValue: status))")
        pthread_detach(thread)
        _ = pthread_setname_np(thread, String(decoding: name.utf8.prefix(15), as: UTF8.self))
    }

    /// Blocks the calling thread until `deadline` (`nanosleep(2)`, resumed after a signal
    /// handler interrupts it); returns at once for a deadline already past. For dedicated
    /// threads only: never call it on the cooperative pool.
    package static func sleep(until deadline: ContinuousClock.Instant) {
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return }
            let (seconds, attoseconds) = left.components
            var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
            _ = nanosleep(&request, nil)
        }
    }

    /// The closure, in a class so that its context can cross `pthread_create(3)`.
    private final class Body: Sendable {
        let run: @Sendable () -> Void

        init(_ run: @escaping @Sendable () -> Void) {
            self.run = run
        }
    }
}
