extension BoundedChannel {
    /// The iterator of a ``BoundedChannel`` or a ``PushBuffer`` (their `AsyncIterator`): the single
    /// consumer's way in. Not `Sendable`: it belongs to the consumer's task.
    ///
    /// Each channel makes exactly one, in `makeAsyncIterator()` (a second call stops the program).
    /// Dropping it, with every copy, before the end tells the channel that its consumer went away:
    /// the elements still buffered are discarded (``ChannelStatistics/elementsDiscarded``), a
    /// ``BoundedChannel``'s waiting senders get their elements back with
    /// ``BoundedChannel/SendError/Reason/consumerTerminated``, a ``PushBuffer``'s source is stopped.
    public struct Iterator: AsyncIteratorProtocol {
        @usableFromInline let lifetime: ConsumerLifetime<Element>

        @inlinable
        init(lifetime: ConsumerLifetime<Element>) {
            self.lifetime = lifetime
        }

        /// Returns the next element, suspending while the buffer is empty and the stream is open.
        ///
        /// Taking an element makes room: a ``BoundedChannel`` resumes the senders that now fit; a
        /// ``PushBuffer`` that drains below its low watermark after a pause runs its resume callback
        /// here first, and reads spilled records back (on its blocking-I/O thread, as many as the
        /// memory buffer admits).
        ///
        /// - Returns: the next element, in the order the channel accepted them, or `nil` after the
        ///   producers' `finish()` once the buffer is drained (and on every later call).
        /// - Throws: once the buffer is drained, the error the stream ended with, and the same on
        ///   every later call: the error given to `fail(_:)`; for a ``PushBuffer`` also
        ///   ``CapacityExceededError`` after an overflow (of the capacity with
        ///   ``PushBuffer/OverflowPolicy/fail``, of the spill limit with a spill policy), the spill
        ///   store's error as it is (a ``FileError`` of the spill file with
        ///   ``PushBuffer/OverflowPolicy/spill(directory:limit:)``: `create`, `write`, `read`), or a
        ///   ``SpillCodingError`` when an element could not be encoded or decoded.
        ///   `CancellationError` if the consumer's task is cancelled while waiting or before the
        ///   call: the channel is then terminated for its producers, and every later call throws
        ///   `CancellationError` too.
        @inlinable
        public mutating func next() async throws -> Element? {
            try await lifetime.next()
        }
    }
}

@available(*, unavailable)
extension BoundedChannel.Iterator: Sendable {}
