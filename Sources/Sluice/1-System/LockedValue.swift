#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a `pthread_mutex_t`, with the same `withLock` shape as `Mutex` (the value
/// goes in as `sending` and results come out as `sending`, so non-`Sendable` state such as a
/// state machine holding continuations can live inside, as with `Mutex`).
///
/// Sluice's synchronisation points (``BoundedChannel``, `CancellationGate`, ``ProgressHub``, the
/// chunk pool, the `sluice` command's hand-overs between threads) keep their state here rather than in `Synchronization.Mutex` for one reason: on Linux, `Mutex` hands a contended
/// lock over through `FUTEX_LOCK_PI`/`FUTEX_UNLOCK_PI` system calls, which ThreadSanitizer does
/// not see, so `swift test --sanitize=thread` reports every contended critical section as a race
/// (a 20-line program that appends to an array under a `Mutex` from 8 tasks reproduces it).
/// ThreadSanitizer intercepts `pthread_mutex_lock(3)` and `pthread_mutex_unlock(3)`, so with this
/// lock real races stay visible and correct code reports none. The uncontended cost is the same
/// order (one atomic exchange each way). Should the toolchain teach ThreadSanitizer about
/// `Mutex`, swapping back is a one-line change per user.
///
/// The mutex is adaptive (glibc's `PTHREAD_MUTEX_ADAPTIVE_NP`): a thread that finds it held spins a
/// moment before it sleeps, since the sections it guards are a few instructions long. With the
/// files of a tree committing on 8 threads over 2 cores, that took 1,400 thread switches down
/// to 1,160 for 2,000 files.
///
/// ## Concurrency contract
/// `withLock(_:)` may be called from any thread; it blocks only while another thread is inside
/// its own `body`. The lock is not recursive: calling `withLock(_:)` on the same value from inside
/// `body` deadlocks. As everywhere in Sluice, `body` only decides: it must not resume
/// continuations, yield to streams, call user closures or await.
@usableFromInline
package final class LockedValue<Value>: @unchecked Sendable {
    // Heap-allocated so the mutex has a stable address (a `pthread_mutex_t` may not move).
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline var value: Value

    /// Creates a lock guarding `initialValue`.
    @usableFromInline
    package init(_ initialValue: sending Value) {
        value = initialValue
        mutex = Self.makeMutex()
    }

    deinit {
        Self.freeMutex(mutex)
    }

    /// A heap-allocated adaptive mutex (glibc's `PTHREAD_MUTEX_ADAPTIVE_NP`), initialised: this
    /// lock's and ``LockedCondition``'s.
    static func makeMutex() -> UnsafeMutablePointer<pthread_mutex_t> {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        #if canImport(Glibc)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        #endif
        let result = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(result == 0, "pthread_mutex_init failed: \(result)")
        return mutex
    }

    /// Destroys and frees a mutex from ``makeMutex()``.
    static func freeMutex(_ mutex: UnsafeMutablePointer<pthread_mutex_t>) {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value and returns its result.
    ///
    /// - Parameter body: reads or changes the value; runs with the lock held.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws; the lock is released either way.
    @inlinable
    package func withLock<Result, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
