/// Runs a CPU-heavy function on consecutive blocks on several threads at once, and hands the
/// results out in the order the blocks came in, with a bound on the blocks in flight.
///
/// A producer ``submit(_:)``s blocks; `workerCount` workers, each on a dedicated thread of its
/// own (never Swift's cooperative pool), apply the per-block function
/// to them concurrently; a consumer takes the results with ``next()`` (or `for try await`),
/// always the result of the oldest block not yet handed out, whatever order the workers finish
/// in. ``ParallelGzipEncoder`` compresses on it; an ingest pipeline can run its own parsing or
/// hashing on it the same way.
///
/// ```swift
/// let stage = OrderedParallelStage<Chunk, Int>(workerCount: 4, maximumInFlight: 8, work: { chunk in
///     chunk.withUnsafeBytes { bytes in bytes.reduce(0) { $0 &+ Int($1) } }  // runs on a worker
/// })
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     group.addTask {
///         for try await chunk in source { try await stage.submit(chunk) }  // suspends while 8 are in flight
///         stage.finish()
///     }
///     for try await sum in stage { print(sum) }  // in input order
///     try await group.waitForAll()
/// }
/// ```
///
/// **The bound.** A block is *in flight* from its submission until its result is handed out:
/// waiting for a worker, being worked on, or finished and waiting for an earlier block. At most
/// `maximumInFlight` are; ``submit(_:)`` past that suspends until the consumer takes the oldest
/// result. A slow consumer therefore slows the producer (backpressure), and the memory held is
/// at most `maximumInFlight` inputs and outputs plus each worker's own state, whatever the
/// length of the input. A block whose predecessor is slow holds its place: the workers go on
/// with later blocks only while the bound allows.
///
/// **Stopping.** The first error a worker throws fails the stage: blocks not started are
/// dropped, results not handed out are discarded, and every later call to ``submit(_:)`` and
/// ``next()`` throws that error, also in a task cancelled because of it (a worker's error wins
/// over the cancellations it causes). ``cancel()``, the cancellation of a task waiting in
/// ``submit(_:)`` or ``next()``, or the release of the stage stops it the same way with
/// `CancellationError`. A block being worked on is not interrupted (the function runs to its
/// end and its result is dropped): ``close()`` stops the stage and returns once no worker runs
/// the function any more, so that nothing is left running behind a failed pipeline.
///
/// Concurrency contract: one producer and one consumer, which may be the same task. Calls of
/// ``submit(_:)`` must not overlap each other, nor calls of ``next()``; any task may call
/// ``finish()``, ``cancel()`` and ``close()``. A task that both submits and consumes must not
/// submit into a full stage (it would wait for itself): it takes a result first while
/// ``isFull``, as ``ParallelGzipEncoder`` does. The stage decides under one lock and resumes
/// tasks after releasing it (as ``BoundedChannel`` does, <doc:ParallelStages>).
public final class OrderedParallelStage<Input: Sendable, Output: Sendable>: Sendable {
    /// The per-block function of one worker: called on that worker's thread only, one block at
    /// a time, so it may keep mutable state (a compressor's stream) without a lock.
    package typealias Work = (Input) throws -> Output

    /// Makes one worker's per-block function; called once per worker, on the worker's thread,
    /// before its first block. An error it throws fails the stage as the function's would.
    package typealias WorkerFactory = @Sendable () throws -> Work

    /// The count of workers, each with a thread of its own (>= 1).
    package let workerCount: Int

    /// The most blocks in flight at once (>= 1): submitted and not yet handed out.
    package let maximumInFlight: Int

    let storage: Storage

    /// Creates a stage whose workers each make their own per-block function, and starts their
    /// threads.
    ///
    /// - Parameters:
    ///   - workerCount: the count of workers (threads); must be >= 1. More than
    ///     `ProcessorAffinity.availableProcessorCount()` only take turns.
    ///   - maximumInFlight: the most blocks in flight; must be >= 1. `nil` (the default) is four
    ///     times `workerCount`: while the oldest block is slow, each other worker can still go
    ///     through three more (<doc:ParallelStages>, "Design").
    ///   - label: the name of the workers' threads (a number is appended; 15 bytes are kept).
    ///   - makeWorker: makes one worker's per-block function, on that worker's thread, at its
    ///     first block; state the function captures belongs to that worker alone.
    public convenience init(
        workerCount: Int, maximumInFlight: Int? = nil, label: String = "sluice.worker",
        makeWorker: @escaping @Sendable () throws -> (Input) throws -> Output
    ) {
        self.init(
            workerCount: workerCount, maximumInFlight: maximumInFlight, label: label, makeWorker: makeWorker,
            hooks: Hooks())
    }

    /// Creates a stage whose workers share one stateless per-block function, and starts their
    /// threads.
    ///
    /// - Parameters:
    ///   - workerCount: the count of workers (threads); must be >= 1.
    ///   - maximumInFlight: the most blocks in flight; must be >= 1; `nil` is four times
    ///     `workerCount`.
    ///   - label: the name of the workers' threads (a number is appended; 15 bytes are kept).
    ///   - work: the per-block function; called on several threads at once.
    public convenience init(
        workerCount: Int, maximumInFlight: Int? = nil, label: String = "sluice.worker",
        work: @escaping @Sendable (Input) throws -> Output
    ) {
        self.init(
            workerCount: workerCount, maximumInFlight: maximumInFlight, label: label, makeWorker: { work },
            hooks: Hooks())
    }

    /// Creates a stage with test hooks that report suspensions.
    init(workerCount: Int, maximumInFlight: Int?, label: String, makeWorker: @escaping WorkerFactory, hooks: Hooks) {
        precondition(workerCount >= 1, "OrderedParallelStage needs at least 1 worker, got \(workerCount)")
        self.workerCount = workerCount
        self.maximumInFlight = maximumInFlight ?? 4 * workerCount
        storage = Storage(
            workerCount: workerCount, maximumInFlight: self.maximumInFlight, label: label, makeWork: makeWorker,
            hooks: hooks)
    }

    deinit {
        storage.cancel()
    }

    /// Submits the next block, suspending while `maximumInFlight` blocks are in flight.
    ///
    /// Returns once the block is handed to an idle worker or queued for the next one to finish.
    /// A submission that finds room never suspends and does not check cancellation.
    ///
    /// - Parameter input: the block; it is released once its worker is done with it.
    /// - Throws: the error a worker threw, once one did; `CancellationError` once the stage was
    ///   cancelled, or when the calling task is cancelled while it waits (which cancels the
    ///   stage).
    /// - Precondition: ``finish()`` has not been called.
    public func submit(_ input: Input) async throws {
        try await storage.submit(input)
    }

    /// No more blocks: ``next()`` returns `nil` once every result was handed out.
    ///
    /// Does nothing after a failure, a cancellation or a first call. Callable from any task;
    /// never suspends.
    public func finish() {
        storage.finish()
    }

    /// The result of the oldest block not yet handed out, waiting until it is finished.
    ///
    /// - Returns: the result, or `nil` after ``finish()`` once every result was handed out.
    /// - Throws: the error a worker threw, once one did (even for a block that finished before
    ///   it: a failed stage hands nothing more out); `CancellationError` once the stage was
    ///   cancelled, or when the calling task is cancelled while it waits (which cancels the
    ///   stage).
    public func next() async throws -> Output? {
        try await storage.next()
    }

    /// The result of the oldest block not yet handed out when it is already finished, without
    /// waiting.
    ///
    /// - Returns: the result; `nil` when the oldest block is not finished yet, or when every
    ///   result was handed out.
    /// - Throws: as ``next()``, without waiting.
    public func nextIfReady() throws -> Output? {
        try storage.nextIfReady()
    }

    /// Whether `maximumInFlight` blocks are in flight, so that ``submit(_:)`` would wait.
    ///
    /// Exact for a task that is the stage's only producer and consumer (only its own calls
    /// change the count); a snapshot for anyone else.
    public var isFull: Bool { storage.isFull }

    /// The most blocks that were in flight at once so far (<= ``maximumInFlight``).
    package var peakInFlight: Int { storage.peakInFlight }

    /// Stops the stage: blocks not started are dropped, results not handed out are
    /// discarded, and a waiting ``submit(_:)`` or ``next()`` throws `CancellationError`.
    ///
    /// Blocks being worked on run to their end (use ``close()`` to wait for them). Does
    /// nothing after a worker's error, which stands, nor once every result was handed out after
    /// ``finish()``. Callable from any task; never suspends.
    public func cancel() {
        storage.cancel()
    }

    /// Stops the stage as ``cancel()`` does, then waits until no worker runs the per-block
    /// function.
    ///
    /// The wait is at most the time one block takes on a worker. After a normal end (every
    /// result handed out) it returns at once. Not cancellable: it is how a failed stage leaves
    /// nothing running behind it.
    public func close() async {
        await storage.close()
    }
}

extension OrderedParallelStage: AsyncSequence {
    /// The error of iteration: a worker's error, or `CancellationError`.
    public typealias Failure = any Error

    /// Iterates over the stage's results by calling ``OrderedParallelStage/next()``.
    public struct Iterator: AsyncIteratorProtocol {
        let stage: OrderedParallelStage

        /// The next result in input order; `nil` after ``OrderedParallelStage/finish()`` once
        /// all were handed out.
        ///
        /// - Throws: as ``OrderedParallelStage/next()``.
        public mutating func next() async throws -> Output? {
            try await stage.next()
        }
    }

    /// An iterator over the results. The stage has one consumer: iterate from one task.
    public func makeAsyncIterator() -> Iterator {
        Iterator(stage: self)
    }
}
