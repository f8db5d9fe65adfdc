#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value guarded by a `pthread_mutex_t` (as ``LockedValue``), with a condition variable
/// (`pthread_cond_t` on `CLOCK_MONOTONIC`) so that a thread can block until the value says it
/// may go on: a wait that the events changing the value end, instead of a loop that looks
/// again every millisecond.
///
/// Every ``withLock(_:)`` wakes the waiting threads once the lock is released (a
/// `pthread_cond_broadcast(3)`, which costs one atomic read when no thread waits), so no change
/// can be missed by a waiter.
///
/// ## Concurrency contract
/// ``withLock(_:)`` may be called from any thread. ``wait(timeout:until:)`` blocks its
/// thread: call it from a thread of the caller's own (a ``BlockingIOExecutor``'s, a dedicated
/// one), never from the cooperative pool. Not recursive; `body` and `ready` only decide.
package final class LockedCondition<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var value: Value

    /// Creates a lock and condition guarding `initialValue`.
    package init(_ initialValue: sending Value) {
        value = initialValue
        mutex = LockedValue<Value>.makeMutex()
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        precondition(pthread_cond_init(condition, &attributes) == 0, "pthread_cond_init failed")
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
        LockedValue<Value>.freeMutex(mutex)
    }

    /// Runs `body` with exclusive access to the value, then wakes the threads waiting in
    /// ``wait(timeout:until:)`` to look at it again.
    ///
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws; the lock is released (and waiters woken) either way.
    package func withLock<Result, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        pthread_mutex_lock(mutex)
        defer {
            pthread_mutex_unlock(mutex)
            pthread_cond_broadcast(condition)
        }
        return try body(&value)
    }

    /// Blocks until `ready` returns a value (run under the lock, first at once, then after each
    /// change made by ``withLock(_:)``), or for at most `timeout` (on the monotonic clock) if
    /// one is given. What `ready` changes wakes the other waiters, as a change by ``withLock(_:)`` does.
    ///
    /// - Returns: what `ready` returned, or `nil` when `timeout` passed first.
    package func wait<Result>(
        timeout: Duration? = nil, until ready: (inout sending Value) -> sending Result?
    ) -> sending Result? {
        pthread_mutex_lock(mutex)
        defer {
            pthread_mutex_unlock(mutex)
            pthread_cond_broadcast(condition)  // what `ready` changed
        }
        var limit = timespec()
        if let timeout {
            clock_gettime(CLOCK_MONOTONIC, &limit)
            let (seconds, attoseconds) = timeout.components
            let nanoseconds = Int(limit.tv_nsec) + Int(attoseconds / 1_000_000_000)
            limit.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
            limit.tv_nsec = nanoseconds % 1_000_000_000
        }
        while true {
            if let result = ready(&value) { return result }
            if timeout == nil {
                pthread_cond_wait(condition, mutex)
            } else if pthread_cond_timedwait(condition, mutex, &limit) == ETIMEDOUT {
                return ready(&value)
            }
        }
    }
}
