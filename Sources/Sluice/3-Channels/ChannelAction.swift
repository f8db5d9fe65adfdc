/// The answers of a ``ChannelMachine`` to the consumer's events: what its storage does once the
/// lock is released.
///
/// Generic over the channel's `Consumer` handle (a continuation in the storage, an integer in
/// tests) and over its producer side's `Effect` (senders to resume, a source to resume or stop)
/// and `Refill` (a read of spilled records). Each machine refers to them through the
/// type aliases of ``ChannelMachine`` (`NextAction`, `EndAction`, ...).
@usableFromInline
enum ChannelAction {
    /// What the caller of `makeAsyncIterator()` does.
    @usableFromInline
    enum MakeIterator: Equatable {
        /// Create the iterator.
        case makeIterator
        /// Stop the program: a second consumer is a programming error.
        case failSecondIterator
    }

    /// What the consumer does in `next()`.
    @usableFromInline
    enum Next<Element, Effect, Refill> {
        /// Carry out the producer side's effect (it reacts to the room made), then return the
        /// element.
        case returnElement(Element, Effect)
        /// Fetch accepted elements kept outside the memory buffer (outside the lock), then
        /// report the outcome to the machine, which answers again.
        case refill(Refill)
        /// Return nil: finished and drained.
        case returnNil
        /// Throw this error: failed and drained.
        case throwError(any Error)
        /// Throw `CancellationError`: the consumer has gone away.
        case throwCancellation
        /// Suspend as `id`: register with `consumerSuspended(id:consumer:)`; on cancellation,
        /// call `consumerCancelled(id:)`.
        case suspend(id: Int)
    }

    /// What the consumer does after registering its continuation.
    @usableFromInline
    enum ConsumerSuspended<Consumer, Element> {
        /// Stay suspended until an element, the end, or cancellation.
        case wait
        /// Resume the consumer at once with this.
        case resumeConsumer(Consumer, ConsumerWake<Element>)
    }

    /// What an end of the stream does, from either side: the producers finishing or failing
    /// it, the consumer's cancellation or departure.
    @usableFromInline
    enum End<Consumer, Element, Effect> {
        /// Nothing: the stream had already ended that way.
        case none
        /// Carry out the producer side's effect, then wake the consumer (if it was waiting) with
        /// its answer: nil or the error at the producers' end, `CancellationError` at its own.
        case resume(consumer: (Consumer, ConsumerWake<Element>)?, Effect)
    }
}

extension ChannelAction.Next: Sendable where Element: Sendable, Effect: Sendable, Refill: Sendable {}
extension ChannelAction.ConsumerSuspended: Sendable where Consumer: Sendable, Element: Sendable {}
extension ChannelAction.End: Sendable where Consumer: Sendable, Element: Sendable, Effect: Sendable {}
