/// A buffer that a source which cannot wait pushes into with a synchronous ``yield(_:)``, and
/// one consumer reads as an `AsyncSequence`: lossless, bounded, never blocking on the consumer.
///
/// Callbacks, sockets, timers and C libraries deliver data whether or not anyone is ready.
/// ``yield(_:)`` never waits for the consumer; it answers what happened, so the source can act:
///
/// | Answer | Meaning | The source should |
/// |---|---|---|
/// | `.enqueued(.keepGoing)` | buffered | go on |
/// | `.enqueued(.pause)` | buffered, the high watermark is reached | pause until ``onResume(_:)`` fires, if it can |
/// | `.spilled(demand)` | written to the spill store (``OverflowPolicy/spill(directory:limit:)``) | as for `.enqueued(demand)` |
/// | `.rejected(element, offset:)` | over capacity: the stream fails after what was accepted | stop; the element is handed back |
/// | `.terminated(element)` | the stream has ended or its consumer left | stop; the element is handed back |
///
/// **Sources that can pause** watch the demand: "pause" is answered from the yield that makes the
/// buffered count (memory and spill store) reach the high watermark until the consumer drains it
/// below the low watermark; then the callback registered with ``onResume(_:)`` runs once for that
/// crossing, on the consumer's task, outside any lock (it may yield again), unless a newer pause
/// overtook it.
///
/// **Sources that cannot pause** meet the capacity (a count of elements, and optionally a byte
/// budget measured by `weight`; an element heavier than the whole budget is admitted only into an
/// empty buffer) and the ``OverflowPolicy``:
/// - ``OverflowPolicy/fail`` (the default): the yield past capacity is rejected with its element
///   handed back; the consumer receives every accepted element in order, then
///   ``CapacityExceededError``; the source's cancellation hook (``onCancel(_:)``) runs once, later,
///   on the buffer's own thread; later yields are rejected.
/// - ``OverflowPolicy/spill(directory:limit:)`` (for ``SpillCodable`` elements such as
///   ``Chunk``): past capacity, elements go to a spill file and come back in order; memory stays
///   bounded; past the limit the stream fails as with `fail`.
///
/// **Ending.** The source calls ``finish()`` or ``fail(_:)``: the consumer receives every
/// accepted element, then the end or the error. The consumer going away (its task cancelled,
/// or its iterator dropped: a `break` out of `for try await`) ends the stream too: the elements
/// still buffered are discarded (counted in ``ChannelStatistics/elementsDiscarded``), later yields answer
/// `.terminated`, and the cancellation hook runs once, through a `CancellationGate`, even when
/// it is installed only afterwards. So does the buffer being freed while its stream is open
/// (nothing iterates it and nothing keeps it).
///
/// **Concurrency contract.** The type is `Sendable`. ``yield(_:)``, ``finish()``, ``fail(_:)``,
/// ``onResume(_:)`` and ``onCancel(_:)`` may be called from any thread, several at once; none
/// suspends, and ``yield(_:)`` blocks only for a short critical section (and, with a spill
/// policy, a regular-file write). One consumer: a second ``makeAsyncIterator()`` stops the
/// program. No lock is held while a continuation is resumed or a callback or hook runs.
///
/// Which thread runs each closure:
/// - `weight`: the yielding thread, inside ``yield(_:)``, once per yield, outside any lock.
/// - The resume callback (``onResume(_:)``): the consumer's task, inside its `next()`.
/// - The cancellation hook (``onCancel(_:)``): a thread of the buffer's own (a serial dispatch
///   queue, not the cooperative pool), after the call that stopped the stream has been made; never
///   inside ``yield(_:)``, ``finish()``, ``fail(_:)``, ``onCancel(_:)``, `fromCallbacks` or
///   `Task.cancel()`. A source that holds its own lock while it calls in, and takes that lock to
///   stop, cannot deadlock itself.
///
/// ```swift
/// let buffer = PushBuffer<Chunk>(capacity: 16, byteBudget: 1 << 20)
/// buffer.onCancel { socket.close() }
/// socket.onData = { chunk in
///     if case .rejected = buffer.yield(chunk) { socket.close() }
/// }
/// socket.onClose = { buffer.finish() }
/// for try await chunk in buffer { try await sink.write(chunk) }
/// ```
public final class PushBuffer<Element: Sendable>: AsyncSequence, Sendable {
    /// The error type of iteration: ``CapacityExceededError``, the error given to ``fail(_:)``,
    /// a spill store's error (a ``FileError`` of the spill file) or ``SpillCodingError``, or
    /// `CancellationError`.
    public typealias Failure = any Error

    /// Whether the source should go on producing.
    public enum Demand: Sendable, Hashable {
        /// Below the high watermark (or not yet drained below the low one after a pause).
        case keepGoing
        /// The buffer reached the high watermark: pause until the resume callback runs.
        case pause
    }

    /// What ``yield(_:)`` did with an element.
    public enum YieldResult: Sendable {
        /// Buffered in memory (or handed to the waiting consumer), with the demand now.
        case enqueued(Demand)
        /// Past capacity, written to the spill store; it will be delivered in order. The demand
        /// counts spilled elements too, so a source that can pause is told to at the high
        /// watermark whether the element went to memory or to the file.
        case spilled(Demand)
        /// Past capacity (or the spill limit): not taken. The stream fails with
        /// ``CapacityExceededError`` after the accepted elements; `offset` is the element's byte
        /// offset if the source gave one to ``yield(_:offset:)``.
        case rejected(Element, offset: Int64?)
        /// The stream had ended (finished, failed, or its consumer left): not taken.
        case terminated(Element)
    }

    @usableFromInline let storage: Storage

    /// Creates an open, empty buffer.
    ///
    /// - Parameters:
    ///   - capacity: the most elements the memory buffer holds; must be >= 1.
    ///   - byteBudget: the most bytes (sum of `weight`) the memory buffer holds, or `nil` for no
    ///     byte bound; must be >= 0. An element heavier than the budget enters only an empty
    ///     buffer.
    ///   - highWatermark: the buffered count (memory and spill store) from which yields answer
    ///     ``Demand/pause``; default `capacity`; >= 1.
    ///   - lowWatermark: a paused source resumes when the count drops below this; default half
    ///     the high watermark (at least 1); in 1...highWatermark.
    ///   - policy: what a yield past capacity does; default ``OverflowPolicy/fail``.
    ///   - weight: an element's size in bytes; must return >= 0. Runs on the yielding thread,
    ///     inside ``yield(_:)``, once per yield, outside any lock (a spilled element's weight is
    ///     stored with its record, so read-back does not call it). `nil` (the default): a
    ///     ``Chunk`` weighs the bytes it holds in memory (its count; a hole nothing, as in a
    ///     channel's byte budget), any other element 0.
    public init(
        capacity: Int, byteBudget: Int? = nil, highWatermark: Int? = nil, lowWatermark: Int? = nil,
        policy: OverflowPolicy = .fail, weight: (@Sendable (Element) -> Int)? = nil
    ) {
        storage = Storage(
            capacity: capacity, byteBudget: byteBudget, highWatermark: highWatermark,
            lowWatermark: lowWatermark, policy: policy, weight: weight ?? Self.defaultWeight)
    }

    /// The weight of an element when none is given: a chunk's bytes, however the buffer of
    /// chunks is made (C53: a buffer made without `byteBudget:` weighed them 0), else 0.
    static var defaultWeight: @Sendable (Element) -> Int {
        guard Element.self == Chunk.self else { return { _ in 0 } }
        return { element in (element as? Chunk)?.residentCount ?? 0 }
    }

    /// Offers `element` to the buffer without waiting for the consumer.
    ///
    /// Concurrency: callable from any thread, by several at once; elements from one thread keep
    /// their order. Never suspends; blocks only for a short critical section or, past capacity
    /// with a spill policy, for one append to the spill store (a regular-file write).
    ///
    /// - Parameter element: the next element.
    /// - Returns: what happened to it (see ``YieldResult``); a rejected or terminated element is
    ///   handed back.
    @inlinable
    @discardableResult
    public func yield(_ element: Element) -> YieldResult {
        storage.yield(element, offset: nil)
    }

    /// Offers `element`, which starts at byte `offset` of the source's stream, to the buffer.
    ///
    /// Like ``yield(_:)``; a rejection hands the offset back with the element, so the source can
    /// say where the data stopped.
    ///
    /// - Parameters:
    ///   - element: the next element.
    ///   - offset: the element's byte offset in the source's stream.
    /// - Returns: what happened to the element.
    @inlinable
    @discardableResult
    public func yield(_ element: Element, offset: Int64) -> YieldResult {
        storage.yield(element, offset: offset)
    }

    /// Ends the stream: the consumer receives every accepted element, then `nil`.
    ///
    /// Later yields answer `.terminated`. The cancellation hook does not run (the source stopped
    /// itself). Does nothing if the stream had already ended. Callable from any thread; with a
    /// spill policy it waits for a spill write in progress, so that element comes before the end.
    @inlinable
    public func finish() {
        storage.end(.finished)
    }

    /// Fails the stream: the consumer receives every accepted element, then `error`.
    ///
    /// Later yields answer `.terminated`. The cancellation hook does not run. Does nothing if the
    /// stream had already ended. Callable from any thread.
    ///
    /// - Parameter error: what the consumer's `next()` throws after the buffered elements.
    @inlinable
    public func fail(_ error: any Error) {
        storage.end(.failed(error))
    }

    /// Registers the callback that resumes a paused source.
    ///
    /// It runs once each time the buffer, paused at the high watermark, drains below the low
    /// watermark: on the consumer's task, inside its `next()`, before that element is returned,
    /// with no lock held, so it may yield again. It is skipped when a newer pause overtook it: a
    /// yield that answered ``Demand/pause`` after the drain and before the callback's turn (the
    /// next crossing resumes the source). It does not run once the stream has ended. A later
    /// registration replaces an earlier one. It is released when the consumer's iterator is
    /// gone, so a callback that captures the buffer does not keep it alive.
    ///
    /// - Parameter callback: resumes the source. Runs on the consumer's task, inside `next()`;
    ///   keep it short (it delays the consumer).
    public func onResume(_ callback: @escaping @Sendable () -> Void) {
        storage.setResumeCallback(callback)
    }

    /// Installs the source's cancellation hook, run once when the stream stops the source.
    ///
    /// The stream stops the source when the consumer goes away before the end (its task is
    /// cancelled, it leaves its loop, it drops its iterator), when it overflows (capacity, spill
    /// limit, a spill store error, a failed read-back), or when the buffer is freed while open.
    /// Not when the source itself calls ``finish()`` or ``fail(_:)`` first.
    ///
    /// `handler` runs at most once, with no lock held, on a thread of the buffer's own (a serial
    /// dispatch queue), after the event that stops the stream: never inside ``yield(_:)``,
    /// ``finish()``, ``fail(_:)``, this method, or `Task.cancel()`, so it may take a lock the
    /// source holds while it calls into the buffer. If the stream was already stopped
    /// ("cancelled before installed"), it is scheduled at once and runs on that thread.
    ///
    /// - Parameter handler: stops the source. Runs on the buffer's own thread, once.
    /// - Precondition: Called at most once per buffer (the stop runs once, as `CancellationGate.install(_:)` installs it).
    public func onCancel(_ handler: @escaping @Sendable () -> Void) {
        storage.installStop(handler)
    }

    /// The buffer's counters now. Callable from any thread; takes the lock briefly.
    @inlinable
    public var statistics: ChannelStatistics {
        storage.statistics
    }

    /// Returns the buffer's single iterator.
    ///
    /// - Important: Call it once per buffer; a second call stops the program. Dropping the
    ///   iterator before the end ends the stream and stops the source (see ``PushBuffer``).
    @inlinable
    public func makeAsyncIterator() -> BoundedChannel<Element>.Iterator {
        AsyncIterator(lifetime: storage.makeConsumer())
    }
}
