extension PushBuffer {
    /// Starts a callback-driven source and returns the buffer its values arrive in.
    ///
    /// `start` is called once, synchronously, before this method returns. It receives two
    /// functions to hand to the source, and returns the source's stop closure:
    /// - `deliver(value)` yields the value and returns the ``YieldResult``, so a source that can
    ///   pause sees ``Demand/pause`` and one that cannot sees `.rejected` and stops;
    /// - `complete(nil)` finishes the stream, `complete(error)` fails it with `error`.
    ///
    /// The stop closure is installed through the buffer's ``CancellationGate`` (as with
    /// ``onCancel(_:)``): it runs once when the consumer goes away or the buffer overflows, and at
    /// once if that happened before `start` returned it. A source that completes (or whose
    /// consumer has already left) inside `start` is handled: its values are kept in order and its
    /// completion is kept. Both functions may be called from any thread, and after `start` returns.
    ///
    /// ```swift
    /// let buffer = PushBuffer<Chunk>.fromCallbacks(capacity: 16, byteBudget: 1 << 20) { deliver, complete in
    ///     let token = library.subscribe(onData: { _ = deliver(Chunk($0)) }, onEnd: { complete($0) })
    ///     return { library.unsubscribe(token) }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - capacity: the most elements the memory buffer holds; >= 1.
    ///   - byteBudget: the most bytes (sum of `weight`) in memory, or `nil`.
    ///   - highWatermark: the count from which deliveries answer "pause"; default `capacity`.
    ///   - lowWatermark: the count below which the source may resume; default half the high one.
    ///   - policy: what a delivery past capacity does; default ``OverflowPolicy/fail``.
    ///   - weight: an element's size in bytes; default 0.
    ///   - start: starts the source with `deliver` and `complete`; returns its stop closure.
    /// - Returns: the buffer to iterate (once).
    public static func fromCallbacks(
        capacity: Int, byteBudget: Int? = nil, highWatermark: Int? = nil, lowWatermark: Int? = nil,
        policy: OverflowPolicy = .fail, weight: @escaping @Sendable (Element) -> Int = { _ in 0 },
        start: (
            _ deliver: @escaping @Sendable (Element) -> YieldResult,
            _ complete: @escaping @Sendable ((any Error)?) -> Void
        ) -> (@Sendable () -> Void)
    ) -> PushBuffer {
        let buffer = PushBuffer(
            capacity: capacity, byteBudget: byteBudget, highWatermark: highWatermark,
            lowWatermark: lowWatermark, policy: policy, weight: weight)
        let stop = start(
            { [buffer] element in buffer.yield(element) },
            { [buffer] error in
                if let error { buffer.fail(error) } else { buffer.finish() }
            })
        buffer.onCancel(stop)
        return buffer
    }
}

extension PushBuffer where Element == Chunk {
    /// Starts a callback-driven source of chunks, weighing each by its byte count.
    ///
    /// As ``PushBuffer/fromCallbacks(capacity:byteBudget:highWatermark:lowWatermark:policy:weight:start:)``
    /// with `weight` set to the chunk's byte count.
    public static func fromCallbacks(
        capacity: Int, byteBudget: Int?, highWatermark: Int? = nil, lowWatermark: Int? = nil,
        policy: OverflowPolicy = .fail,
        start: (
            _ deliver: @escaping @Sendable (Chunk) -> YieldResult,
            _ complete: @escaping @Sendable ((any Error)?) -> Void
        ) -> (@Sendable () -> Void)
    ) -> PushBuffer {
        fromCallbacks(
            capacity: capacity, byteBudget: byteBudget, highWatermark: highWatermark,
            lowWatermark: lowWatermark, policy: policy, weight: { $0.count }, start: start)
    }
}
