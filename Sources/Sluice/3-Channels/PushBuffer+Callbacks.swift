extension PushBuffer {
    /// Starts a callback-driven source and returns the buffer its values arrive in.
    ///
    /// `start` is called once, synchronously, on the caller's thread, before this method returns.
    /// It receives two functions to hand to the source, and returns the source's stop closure:
    /// - `deliver(value)` yields the value and returns the ``YieldResult``, so a source that can
    ///   pause sees ``Demand/pause`` and one that cannot sees `.rejected` and stops;
    /// - `complete(nil)` finishes the stream, `complete(error)` fails it with `error`.
    ///
    /// Both may be called from any thread, and after `start` returns; they run on the caller's
    /// thread and never wait for the consumer. They hold the buffer weakly: once the buffer is
    /// freed, `deliver` answers `.terminated` and `complete` does nothing.
    ///
    /// **The stop closure** runs at most once, when the stream stops the source: on overflow
    /// (capacity, spill limit, a spill store error, a failed read-back), when the consumer is
    /// cancelled or leaves its loop before the end, or when the buffer is freed while its stream
    /// is open (a buffer that is never iterated is stopped when the last reference to it goes).
    /// It does not run once the source has ended the stream itself with `complete`, even if the
    /// consumer leaves afterwards. It runs on a thread of the buffer's own (a serial dispatch
    /// queue, not the cooperative pool), after the event: never inside `deliver`, `complete`,
    /// `start`, this method, or `Task.cancel()`, so a source that holds its own lock while it
    /// calls in and takes the same lock in its stop closure cannot deadlock. If the stream was
    /// stopped before `start` returned its stop closure, the closure is scheduled as soon as
    /// `start` returns. A source that completes inside `start` is handled: its values are kept in
    /// order and its completion is kept.
    ///
    /// ```swift
    /// let buffer = PushBuffer<Chunk>.fromCallbacks(capacity: 16, byteBudget: 1 << 20) { deliver, complete in
    ///     let token = library.subscribe(onData: { _ = deliver(Chunk($0)) }, onEnd: { complete($0) })
    ///     return { library.unsubscribe(token) }   // may take the library's lock: never called inside deliver
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - capacity: the most elements the memory buffer holds; >= 1.
    ///   - byteBudget: the most bytes (sum of `weight`) in memory, or `nil`.
    ///   - highWatermark: the count from which deliveries answer "pause"; default `capacity`.
    ///   - lowWatermark: the count below which the source may resume; default half the high one.
    ///   - policy: what a delivery past capacity does; default ``OverflowPolicy/fail``.
    ///   - weight: an element's size in bytes; `nil` (the default): a ``Chunk`` weighs the bytes
    ///     it holds in memory (a hole nothing), any other element 0. Runs on the thread that calls `deliver`, once
    ///     per delivery, outside any lock.
    ///   - start: starts the source with `deliver` and `complete`; returns its stop closure. Runs
    ///     once, on the caller's thread, before this method returns.
    /// - Returns: the buffer to iterate (once).
    public static func fromCallbacks(
        capacity: Int, byteBudget: Int? = nil, highWatermark: Int? = nil, lowWatermark: Int? = nil,
        policy: OverflowPolicy = .fail, weight: (@Sendable (Element) -> Int)? = nil,
        start: (
            _ deliver: @escaping @Sendable (Element) -> YieldResult,
            _ complete: @escaping @Sendable ((any Error)?) -> Void
        ) -> (@Sendable () -> Void)
    ) -> PushBuffer {
        let buffer = PushBuffer(
            capacity: capacity, byteBudget: byteBudget, highWatermark: highWatermark,
            lowWatermark: lowWatermark, policy: policy, weight: weight)
        // Weak: the source keeping `deliver` must not keep an abandoned buffer (and, through its
        // stop closure, itself) alive; a freed open buffer stops its source.
        let stop = start(
            { [weak storage = buffer.storage] element in
                storage?.yield(element, offset: nil) ?? .terminated(element)
            },
            { [weak storage = buffer.storage] error in
                storage?.end(error.map { .failed($0) } ?? .finished)
            })
        buffer.storage.installStop(stop)
        return buffer
    }
}
