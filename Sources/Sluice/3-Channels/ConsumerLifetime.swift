/// The consumer's hold on a channel: when its iterator (and every copy of it) is gone, the
/// channel learns that its consumer went away.
///
/// Shared by ``BoundedChannel`` and ``PushBuffer``: their iterators keep one, and its `deinit`
/// calls ``ChannelStorage/consumerTerminated()``, which releases the producers (suspended
/// senders fail, a push source is stopped) and drops what is still buffered.
@usableFromInline
final class ConsumerLifetime<Storage: ChannelStorage>: Sendable {
    /// The channel the consumer reads.
    @usableFromInline let storage: Storage

    @inlinable
    init(storage: Storage) {
        self.storage = storage
    }

    deinit {
        storage.consumerTerminated()
    }
}
