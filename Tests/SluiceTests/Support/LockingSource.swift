#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Sluice

/// A push source shaped like a C library: it holds its own lock, an error-checking mutex
/// (`PTHREAD_MUTEX_ERRORCHECK`), across every call it makes into Sluice, and takes the same lock
/// in its stop closure. A stop closure run inside one of those calls, on the caller's thread,
/// gets `EDEADLK` from `pthread_mutex_lock(3)` (recorded, not a hang); run anywhere else, it
/// waits for the call to return and gets 0.
final class LockingSource: @unchecked Sendable {
    // Heap-allocated: a pthread mutex may not move. Guarded by itself; the rest by `record`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let record = LockedValue((stops: 0, lockResults: [CInt]()))
    /// Opens when the stop closure has run (the first time).
    let stopped = Latch()

    init() {
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, CInt(PTHREAD_MUTEX_ERRORCHECK))
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        precondition(pthread_mutex_init(mutex, &attributes) == 0)
        pthread_mutexattr_destroy(&attributes)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` (a call into Sluice) with the source's lock held.
    func locked<Result>(_ body: () throws -> Result) rethrows -> Result {
        precondition(pthread_mutex_lock(mutex) == 0, "the source's lock is not re-entered by its own calls")
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// The stop closure: takes the source's lock, as an unsubscribe does.
    func stop() {
        let result = pthread_mutex_lock(mutex)
        if result == 0 { pthread_mutex_unlock(mutex) }
        record.withLock {
            $0.stops += 1
            $0.lockResults.append(result)
        }
        stopped.open()
    }

    /// How many times the stop closure ran.
    var stops: Int { record.withLock { $0.stops } }

    /// What `pthread_mutex_lock(3)` returned in each run of the stop closure (`EDEADLK`: it ran
    /// inside a call the source made).
    var lockResults: [CInt] { record.withLock { $0.lockResults } }
}

extension PushBuffer {
    /// Returns once every stop closure already scheduled has run (its executor is serial).
    func stopsScheduledSoFarHaveRun() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            storage.stopExecutor.execute { continuation.resume() }
        }
    }
}
