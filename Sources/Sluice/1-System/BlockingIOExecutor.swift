import Dispatch

/// An executor whose jobs run on a dedicated serial dispatch queue, off Swift's cooperative pool.
///
/// Sluice runs every blocking system call (`open` of a FIFO, `read` on a pipe, `write`,
/// `fsync`, zlib on large buffers) on one of these. On a 2-core machine the cooperative pool has
/// 2 threads: two tasks blocked in `read(2)` there would starve every other task, including
/// progress, cancellation and signal handling. A dispatch queue's blocked thread does not hold
/// up the pool, and libdispatch starts another thread for other queues.
///
/// It is both a `SerialExecutor` (actors such as ``FileSink`` run on it) and a `TaskExecutor`
/// (a pipeline stage prefers it with `Task(executorPreference:)`). Jobs run one at a time, in
/// order. Thread-safe: `enqueue` may be called from any thread.
public final class BlockingIOExecutor: SerialExecutor, TaskExecutor {
    private let queue: DispatchQueue

    /// Creates an executor with its own serial queue.
    ///
    /// - Parameter label: the queue's label, visible in debuggers.
    public init(label: String = "sluice.blocking-io") {
        queue = DispatchQueue(label: label)
    }

    /// Runs `job` on this executor's thread after the jobs already enqueued. Called by the Swift
    /// runtime from any thread; returns at once.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { [self] in
            job.runSynchronously(
                isolatedTo: asUnownedSerialExecutor(), taskExecutor: asUnownedTaskExecutor())
        }
    }

    /// Runs `work` on this executor's thread after the jobs already enqueued, and returns at once.
    func execute(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    /// This executor as the runtime's unowned serial-executor reference (for actors that run on it).
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Traps unless the caller runs on this executor's thread (the runtime's isolation check).
    public func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
