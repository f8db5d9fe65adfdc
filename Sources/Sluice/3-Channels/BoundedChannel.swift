/// An asynchronous sequence fed by `send`, bounded by a count of elements and optionally by
/// bytes, whose senders suspend while it is full: lossless backpressure between two stages.
///
/// The buffer holds at most `capacity` elements and, with a `byteBudget`, at most that many
/// bytes, measured by the channel's `weight` of each element (for ``Chunk``, its byte count).
/// An element heavier than the whole budget is admitted only into an empty buffer, so it
/// passes through alone instead of blocking forever.
///
/// **Senders.** ``send(_:)`` enqueues the element when there is room and returns; otherwise
/// it suspends until the consumer has taken enough. Waiting senders are served first come,
/// first served: a later, smaller element never overtakes a suspended one. Any number of
/// tasks may send concurrently. A send that fails throws ``BoundedChannel/SendError`` with the
/// element handed back, so nothing vanishes silently.
///
/// **Ending.** ``finish()`` or ``fail(_:)`` (the first call wins; later calls do nothing):
/// the consumer receives every element already buffered, then `nil` or the error. Senders
/// suspended at that moment, and every later send, fail with
/// ``BoundedChannel/SendError/Reason/finished``.
///
/// **One consumer.** A channel has a single consumer: calling ``makeAsyncIterator()`` twice
/// is a programming error and stops the program. The consumer goes away when its task is
/// cancelled while it waits in `next()` or before it calls `next()`, or when it stops
/// iterating (breaks out of `for try await`, throws out of it, or drops the iterator). Then
/// every suspended sender resumes with ``BoundedChannel/SendError/Reason/consumerTerminated`` and its
/// element, later sends fail the same way, and the elements still in the buffer are dropped
/// with it (counted in ``ChannelStatistics/elementsDiscarded``), as with any consumer that
/// stops reading. A cancelled consumer's `next()` throws `CancellationError`, never `nil`, so
/// a writer cannot mistake cancellation for the end of its input.
///
/// ```swift
/// let channel = BoundedChannel<Chunk>(capacity: 4, byteBudget: 4 << 20)
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     group.addTask {
///         do {
///             for try await chunk in source { try await channel.send(chunk) }
///             channel.finish()
///         } catch {
///             channel.fail(error)
///         }
///     }
///     group.addTask {
///         for try await chunk in channel { try await sink.write(chunk) }
///     }
///     try await group.waitForAll()
/// }
/// ```
public final class BoundedChannel<Element: Sendable>: AsyncSequence, Sendable {
    /// The error type of iteration: what ``fail(_:)`` was given, or `CancellationError`.
    public typealias Failure = any Error

    @usableFromInline let storage: Storage

    /// Creates an open, empty channel.
    ///
    /// - Parameters:
    ///   - capacity: the most elements the buffer holds; must be >= 1 (a capacity of 0 or
    ///     less is a programming error and stops the program, not an unbuffered channel).
    ///   - byteBudget: the most bytes (sum of `weight`) the buffer holds, or `nil` for no
    ///     byte bound; must be >= 0. An element heavier than the budget enters only an empty
    ///     buffer.
    ///   - lowWatermark: once the buffer is full, waiting senders resume only when the consumer
    ///     has drained it to this many elements (hysteresis: a full channel then wakes its
    ///     producer once per `capacity - lowWatermark` elements taken, not once per element).
    ///     In `0..<capacity`; `nil` (the default) is `capacity - 1`: a sender resumes as soon as
    ///     there is room.
    ///   - consumerWakeThreshold: a consumer waiting on an empty buffer is woken once this many
    ///     elements are buffered, so that it takes them as one batch
    ///     (``takeAvailable(upTo:)``) for one thread wake-up; earlier when a producer calls
    ///     ``flush()``, ends the channel, or must wait for room itself. In `1...capacity`;
    ///     the default 1 wakes it at once. A producer that may stop producing for a while
    ///     (a read that can block) must call ``flush()`` before it stops.
    ///   - weight: the size in bytes of one element, called once per ``send(_:)`` outside
    ///     any lock; must return >= 0. The default weighs every element 0.
    public init(
        capacity: Int, byteBudget: Int? = nil, lowWatermark: Int? = nil, consumerWakeThreshold: Int = 1,
        weight: @escaping @Sendable (Element) -> Int = { _ in 0 }
    ) {
        storage = Storage(
            capacity: capacity, byteBudget: byteBudget, lowWatermark: lowWatermark,
            consumerWakeThreshold: consumerWakeThreshold, weight: weight, hooks: Hooks())
    }

    /// Creates a channel with test hooks that report suspensions.
    init(
        capacity: Int, byteBudget: Int? = nil, lowWatermark: Int? = nil, consumerWakeThreshold: Int = 1,
        weight: @escaping @Sendable (Element) -> Int = { _ in 0 }, hooks: Hooks
    ) {
        storage = Storage(
            capacity: capacity, byteBudget: byteBudget, lowWatermark: lowWatermark,
            consumerWakeThreshold: consumerWakeThreshold, weight: weight, hooks: hooks)
    }

    /// Sends `element`, suspending while the buffer has no room for it.
    ///
    /// Returns once the element is in the buffer (or in the consumer's hands). When it has
    /// to wait, the send joins the end of the queue of waiting senders and suspends until
    /// the consumer has taken enough elements (and bytes) for it.
    ///
    /// Concurrency: may be called from any task, by several tasks at once.
    /// Cancellation: a send that finds room enqueues without checking cancellation; a send
    /// that must wait, in a task that is cancelled before or during the wait, fails with
    /// ``BoundedChannel/SendError/Reason/cancelled`` (unless room came first, then it succeeds).
    ///
    /// - Parameter element: the element to send; its weight is computed once, here.
    /// - Throws: ``BoundedChannel/SendError`` holding `element`, with reason
    ///   ``BoundedChannel/SendError/Reason/cancelled`` if the task was cancelled while waiting,
    ///   ``BoundedChannel/SendError/Reason/finished`` if ``finish()`` or ``fail(_:)`` was called
    ///   before or during the send (thrown at once if before), or
    ///   ``BoundedChannel/SendError/Reason/consumerTerminated`` if the consumer went away.
    @inlinable
    public func send(_ element: Element) async throws(BoundedChannel<Element>.SendError) {
        try await storage.send(element)
    }

    /// Ends the channel: the consumer receives the buffered elements, then `nil`.
    ///
    /// Senders suspended now resume with ``BoundedChannel/SendError/Reason/finished`` and their
    /// elements; later sends fail the same way at once. Does nothing if the channel already
    /// ended (by ``finish()`` or ``fail(_:)``) or its consumer went away. Callable from any
    /// task; never suspends.
    @inlinable
    public func finish() {
        storage.finish()
    }

    /// Fails the channel: the consumer receives the buffered elements, then `error`.
    ///
    /// Senders suspended now resume with ``BoundedChannel/SendError/Reason/finished`` and their
    /// elements; later sends fail the same way at once. After the buffered elements, the
    /// consumer's `next()` throws `error`, and rethrows it on every later call. Does nothing
    /// if the channel already ended or its consumer went away. Callable from any task; never
    /// suspends.
    ///
    /// - Parameter error: the error the consumer receives after the buffered elements.
    @inlinable
    public func fail(_ error: any Error) {
        storage.fail(error)
    }

    /// Wakes a consumer left waiting below its wake threshold
    /// (``init(capacity:byteBudget:lowWatermark:consumerWakeThreshold:weight:)``) to take what
    /// is buffered. Call it before a producer stops producing for a while; does nothing when no
    /// consumer waits or nothing is buffered. Callable from any task; never suspends.
    @inlinable
    public func flush() {
        storage.flush()
    }

    /// Takes up to `maximum` more elements that are already buffered, without suspending: the
    /// consumer's way to handle a batch at once (one `writev(2)` for many chunks).
    ///
    /// Call it after the iterator's `next()` returned an element. The elements taken count
    /// against ``init(capacity:byteBudget:lowWatermark:consumerWakeThreshold:weight:)``'s capacity and byte budget
    /// until the consumer's next call to `next()`, which hands them on: the channel's memory
    /// bound holds for them while the consumer still works on them.
    ///
    /// Concurrency: the consumer only, between its calls to `next()`; never suspends.
    ///
    /// - Parameter maximum: the most elements to take (>= 0).
    /// - Returns: the elements, in order; empty when none is buffered.
    @inlinable
    public func takeAvailable(upTo maximum: Int) -> [Element] {
        storage.takeAvailable(upTo: maximum)
    }

    /// Returns the channel's single iterator.
    ///
    /// - Important: Call it once per channel; a second call stops the program. Dropping the
    ///   iterator before the end terminates the channel (see ``BoundedChannel``).
    @inlinable
    public func makeAsyncIterator() -> Iterator {
        AsyncIterator(lifetime: storage.makeConsumer())
    }

    /// The channel's counters now (elements and bytes accepted, delivered and discarded, the
    /// buffer's level and peaks, sender suspensions), in the vocabulary ``PushBuffer`` shares.
    /// Callable from any task; takes the channel's lock briefly.
    @inlinable
    public var statistics: ChannelStatistics {
        storage.statistics
    }
}

extension BoundedChannel where Element == Chunk {
    /// Creates a channel of chunks that weighs each chunk by the bytes it holds in memory: its
    /// ``Chunk/count``, or 0 for a hole (``Chunk/isHole``), which holds none.
    ///
    /// - Parameters:
    ///   - capacity: the most chunks the buffer holds; must be >= 1.
    ///   - byteBudget: the most bytes the buffer holds, or `nil` for no byte bound (bytes are
    ///     still counted in ``statistics``). A chunk larger than the budget enters only an
    ///     empty buffer.
    ///   - lowWatermark: see ``init(capacity:byteBudget:lowWatermark:consumerWakeThreshold:weight:)``.
    ///   - consumerWakeThreshold: see ``init(capacity:byteBudget:lowWatermark:consumerWakeThreshold:weight:)``.
    public convenience init(capacity: Int, byteBudget: Int?, lowWatermark: Int? = nil, consumerWakeThreshold: Int = 1) {
        self.init(
            capacity: capacity, byteBudget: byteBudget, lowWatermark: lowWatermark,
            consumerWakeThreshold: consumerWakeThreshold, weight: { $0.residentCount })
    }
}
