/// The consumer's hold on a ``BoundedChannel`` or a ``PushBuffer``: how its iterator reaches the
/// channel, and how the channel learns that its consumer went away.
///
/// Made by ``ChannelStorage/makeConsumer()`` with two closures over the channel's storage, formed
/// where the storage's type is known, so that ``BoundedChannel/Iterator`` can be one type for both
/// channels while each `next()` still runs code specialised for its channel and element. When the
/// iterator (and every copy of it) is gone, `deinit` tells the storage
/// (``ChannelStorage/consumerTerminated()``), which releases the producers (suspended senders
/// fail, a push source is stopped) and drops what is still buffered.
@usableFromInline
final class ConsumerLifetime<Element>: Sendable {
    /// The channel's `next()`.
    @usableFromInline let next: @Sendable () async throws -> Element?
    /// Tells the channel its consumer is gone.
    @usableFromInline let leave: @Sendable () -> Void

    @inlinable
    init(next: @escaping @Sendable () async throws -> Element?, leave: @escaping @Sendable () -> Void) {
        self.next = next
        self.leave = leave
    }

    deinit {
        leave()
    }
}
