extension BoundedChannel {
    /// Why a ``BoundedChannel/send(_:)`` failed, with the element that was not sent.
    ///
    /// A failed send never loses its element: the error hands it back in ``element``, so the
    /// caller can account for it (count it, retry it elsewhere, release its resources). Together
    /// with what the consumer received, this gives the no-loss invariant a caller can check:
    /// elements attempted = elements received + elements handed back (see ``BoundedChannel`` for
    /// elements the consumer abandoned in the buffer).
    ///
    /// ```swift
    /// do {
    ///     try await channel.send(chunk)
    /// } catch {
    ///     unsent.append(error.element)   // error is BoundedChannel<Chunk>.SendError
    ///     if error.reason == .cancelled { throw CancellationError() }
    /// }
    /// ```
    public struct SendError: Error {
        /// The reason a send failed.
        public enum Reason: Sendable, Hashable {
            /// The sending task was cancelled while the send was suspended for room (or was
            /// already cancelled when it had to suspend).
            case cancelled
            /// The channel was finished or failed, before the send or while it was suspended.
            case finished
            /// The consumer went away: its task was cancelled, or it stopped iterating.
            case consumerTerminated
        }

        /// Why the send failed.
        public var reason: Reason

        /// The element that was not sent, handed back to the caller.
        public var element: Element

        /// Creates an error for an unsent `element`.
        ///
        /// - Parameters:
        ///   - reason: why the send failed.
        ///   - element: the element that was not sent.
        @inlinable
        package init(reason: Reason, element: Element) {
            self.reason = reason
            self.element = element
        }
    }
}

extension BoundedChannel.SendError: Equatable where Element: Equatable {}

extension BoundedChannel.SendError: Hashable where Element: Hashable {}

extension BoundedChannel.SendError: CustomStringConvertible {
    /// A one-line description of the reason, without the element.
    public var description: String {
        switch reason {
        case .cancelled: "send cancelled while waiting for room in the channel"
        case .finished: "send to a finished channel"
        case .consumerTerminated: "send to a channel whose consumer has gone away"
        }
    }
}
