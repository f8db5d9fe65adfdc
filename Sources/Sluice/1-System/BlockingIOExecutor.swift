import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An executor whose jobs run on one dedicated thread of its own, off Swift's cooperative pool.
///
/// Sluice runs every blocking system call (`open` of a FIFO, `read` on a pipe, `write`,
/// `fsync`, zlib on large buffers) on one of these. On a 2-core machine the cooperative pool has
/// 2 threads: two tasks blocked in `read(2)` there would starve every other task, including
/// progress, cancellation and signal handling. A blocked dedicated thread holds up nothing else.
///
/// The thread takes every job queued so far under one lock acquisition and runs them in order;
/// it sleeps on a condition variable only when its queue is empty, so an `enqueue` wakes it
/// (one `futex(2)` call) only if it was asleep. While a stage keeps it busy, handing it more work
/// costs a lock and an append, not a thread wake-up. Jobs a stage schedules on its own executor
/// (an actor call to an actor on the same executor, a resumed continuation) run on the same
/// thread without waking anything.
///
/// It is a `TaskExecutor` (a pipeline stage prefers it with `Task(executorPreference:)`) and
/// lends its thread to actors through ``asUnownedSerialExecutor()`` (``FileSink`` and the file
/// reader run on it). The two roles are two executor objects on the one thread: a task's job
/// runs as nonisolated code on this task executor, an actor's job runs isolated to the actor's
/// serial executor. Were they one object, the runtime could not tell them apart and would run
/// every job as the actor's, so each call from a stage to a nonisolated `async` function (a
/// channel's `send`, a sequence's `next()`) would be a switch of executors: a job queued and
/// taken again, four per chunk in a copy. Jobs run one at a time, in the order they were
/// enqueued. Thread-safe: `enqueue` may be called from any thread. The thread is started by
/// `init` and ends when the executor is released and its queue is empty (each queued job keeps
/// its executor alive until it has run).
package final class BlockingIOExecutor: TaskExecutor {
    private let worker: Worker
    /// The serial executor of the actors that run on this thread.
    private let serial: Serial

    /// Creates an executor and starts its thread.
    ///
    /// - Parameter label: the thread's name (its first 15 bytes, `pthread_setname_np(3)`),
    ///   visible in debuggers and `top -H`.
    package init(label: String = "sluice.blocking-io") {
        worker = Worker()
        serial = Serial(worker: worker)
        worker.start(name: label)
    }

    deinit {
        worker.stop()
    }

    /// Runs `job`, a job of a task that prefers this executor, on this executor's thread after
    /// the jobs already enqueued. Called by the Swift runtime from any thread; returns at once.
    package func enqueue(_ job: consuming ExecutorJob) {
        worker.submit(.task(UnownedJob(job), self))
    }

    /// Runs `work` on this executor's thread after the jobs already enqueued, and returns at once.
    func execute(_ work: @escaping @Sendable () -> Void) {
        worker.submit(.work(work))
    }

    /// Runs `work` on the executor's thread once `delay` has passed (`CLOCK_MONOTONIC`), after
    /// the jobs queued by then: a timed wait of the thread's own condition variable, so a
    /// deadline costs no descriptor (a Dispatch timer needs an `epoll`, an `eventfd` and a
    /// `timerfd`, and libdispatch traps or never fires when it cannot make them). Work still
    /// waiting when the executor is released is dropped.
    func execute(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
        worker.submit(after: delay, work)
    }

    /// Drops the work given to ``execute(after:_:)`` that has not come due, and releases it on
    /// the calling thread: what a user of deadlines calls once none of them matters any more, so
    /// that nothing it holds is kept until its time (or past the process's exit).
    func cancelTimedWork() {
        _ = worker.takeTimedWork()
    }

    /// The serial executor of an actor that runs on this executor's thread: return it from the
    /// actor's `unownedExecutor`. The executor must outlive the actor (store it in the actor).
    package func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        serial.asUnownedSerialExecutor()
    }

    /// Whether the calling thread is this executor's thread.
    var isCurrentThread: Bool { worker.isCurrentThread }

    /// The count of jobs and closures enqueued so far (for tests: a call that needs no switch of
    /// executors enqueues nothing).
    var itemsEnqueued: Int { worker.itemsEnqueued }
}

extension BlockingIOExecutor {
    /// The serial executor of the actors on the thread: jobs it is given run isolated to it.
    fileprivate final class Serial: SerialExecutor {
        private let worker: Worker

        init(worker: Worker) {
            self.worker = worker
        }

        func enqueue(_ job: consuming ExecutorJob) {
            worker.submit(.actor(UnownedJob(job), self))
        }

        func asUnownedSerialExecutor() -> UnownedSerialExecutor {
            UnownedSerialExecutor(ordinary: self)
        }

        /// Traps unless the caller runs on the thread (the runtime's isolation check).
        func checkIsolated() {
            precondition(worker.isCurrentThread, "not on the executor's thread")
        }
    }

    /// One unit of queued work. A job keeps its executor alive until it has run.
    fileprivate enum Item {
        /// A job of a task that prefers the executor: runs as nonisolated code on it.
        case task(UnownedJob, BlockingIOExecutor)
        /// A job of an actor on the thread: runs isolated to the actor's serial executor.
        case actor(UnownedJob, Serial)
        case work(@Sendable () -> Void)
    }

    /// The thread and its queue: a mutex, a condition variable, and the items not yet taken.
    ///
    /// The executor owns it; the thread holds it too, so it outlives the executor until the
    /// thread has drained the queue and seen ``stop()``.
    fileprivate final class Worker: @unchecked Sendable {
        // @unchecked: every stored var is guarded by `mutex`, except `thread`, which is written
        // once by `start` before any other thread can read it.
        private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        private var queue: [Item] = []
        /// Work to queue at a time of `CLOCK_MONOTONIC`, in nanoseconds, soonest first.
        private var timed: [(deadline: UInt64, work: @Sendable () -> Void)] = []
        private var isSleeping = false
        private var isStopped = false
        private var submitted = 0
        private var thread = pthread_t()

        init() {
            pthread_mutex_init(mutex, nil)
            // Timed waits measure CLOCK_MONOTONIC, which a change of the date does not move.
            var attributes = pthread_condattr_t()
            pthread_condattr_init(&attributes)
            pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
            pthread_cond_init(condition, &attributes)
            pthread_condattr_destroy(&attributes)
        }

        deinit {
            pthread_cond_destroy(condition)
            pthread_mutex_destroy(mutex)
            condition.deallocate()
            mutex.deallocate()
        }

        var isCurrentThread: Bool { pthread_equal(pthread_self(), thread) != 0 }

        var itemsEnqueued: Int {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return submitted
        }

        func start(name: String) {
            let context = Unmanaged.passRetained(self).toOpaque()
            let status = pthread_create(&thread, nil, { context in
                let worker = Unmanaged<Worker>.fromOpaque(context!).takeRetainedValue()
                worker.run()
                return nil
            }, context)
            precondition(status == 0, "pthread_create failed: \(ErrorNumber(rawValue: status))")
            pthread_detach(thread)
            _ = pthread_setname_np(thread, String(decoding: name.utf8.prefix(15), as: UTF8.self))
        }

        /// Appends `item` and wakes the thread if it sleeps.
        func submit(_ item: Item) {
            pthread_mutex_lock(mutex)
            queue.append(item)
            submitted += 1
            let wakes = isSleeping
            isSleeping = false
            pthread_mutex_unlock(mutex)
            if wakes { pthread_cond_signal(condition) }
        }

        /// Queues `work` once `delay` has passed, and wakes the thread if it sleeps (to wait
        /// until the soonest deadline).
        func submit(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
            let (seconds, attoseconds) = delay.components
            let deadline = Self.now() + UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
            pthread_mutex_lock(mutex)
            let index = timed.firstIndex { $0.deadline > deadline } ?? timed.endIndex
            timed.insert((deadline, work), at: index)
            let wakes = isSleeping
            isSleeping = false
            pthread_mutex_unlock(mutex)
            if wakes { pthread_cond_signal(condition) }
        }

        /// Removes the timed work not yet due and returns it, to be released outside the mutex.
        func takeTimedWork() -> [@Sendable () -> Void] {
            pthread_mutex_lock(mutex)
            defer { timed = []; pthread_mutex_unlock(mutex) }
            return timed.map(\.work)
        }

        /// `CLOCK_MONOTONIC` now, in nanoseconds.
        private static func now() -> UInt64 {
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
        }

        /// Moves the timed work that is due to the queue (the mutex held).
        private func queueDueWork() {
            guard !timed.isEmpty else { return }  // no clock read for the many that have none
            let now = Self.now()
            while let first = timed.first, first.deadline <= now {
                timed.removeFirst()
                queue.append(.work(first.work))
            }
        }

        /// Lets the thread end once its queue is empty.
        func stop() {
            pthread_mutex_lock(mutex)
            isStopped = true
            let wakes = isSleeping
            isSleeping = false
            pthread_mutex_unlock(mutex)
            if wakes { pthread_cond_signal(condition) }
        }

        /// The thread's loop: take everything queued, run it in order, sleep only when empty.
        private func run() {
            var batch: [Item] = []
            while true {
                pthread_mutex_lock(mutex)
                queueDueWork()
                while queue.isEmpty && !isStopped {
                    isSleeping = true
                    if let deadline = timed.first?.deadline {
                        var until = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
                        _ = pthread_cond_timedwait(condition, mutex, &until)
                        isSleeping = false
                        queueDueWork()
                    } else {
                        pthread_cond_wait(condition, mutex)
                    }
                }
                if queue.isEmpty {  // stopped, and nothing left to run
                    pthread_mutex_unlock(mutex)
                    return
                }
                swap(&batch, &queue)
                pthread_mutex_unlock(mutex)
                for item in batch {
                    switch item {
                    case .task(let job, let executor):
                        job.runSynchronously(on: executor.asUnownedTaskExecutor())
                    case .actor(let job, let serial):
                        job.runSynchronously(on: serial.asUnownedSerialExecutor())
                    case .work(let work):
                        work()
                    }
                }
                batch.removeAll(keepingCapacity: true)
            }
        }
    }
}
