/// The answers of a ``ChannelMachine`` to the consumer's events: what its storage does once the
/// lock is released.
///
/// Generic over the channel's `Consumer` handle (a continuation in the storage, an integer in
/// tests) and over its producer side's `Effect` (senders to resume, a source to resume or stop)
/// and `Refill` (a read of spilled records). Each machine refers to them through the
/// type aliases of ``ChannelMachine`` (`NextAction`, `FinishAction`, ...).
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

    /// What `finish()` and `fail(_:)` do.
    @usableFromInline
    enum Finish<Consumer, Element, Effect> {
        /// Nothing: the stream had already ended.
        case none
        /// Carry out the producer side's effect, and wake the waiting consumer (if any) with its
        /// answer.
        case resume(consumer: (Consumer, ConsumerWake<Element>)?, Effect)
    }

    /// What ends the stream for the consumer's side: its cancellation or its departure.
    @usableFromInline
    enum Terminate<Consumer, Effect> {
        /// Nothing to do.
        case none
        /// Carry out the producer side's effect, and resume the consumer (if it was waiting)
        /// with `CancellationError`.
        case terminate(consumer: Consumer?, Effect)
    }
}

extension ChannelAction.Next: Sendable where Element: Sendable, Effect: Sendable, Refill: Sendable {}
extension ChannelAction.ConsumerSuspended: Sendable where Consumer: Sendable, Element: Sendable {}
extension ChannelAction.Finish: Sendable where Consumer: Sendable, Element: Sendable, Effect: Sendable {}
extension ChannelAction.Terminate: Sendable where Consumer: Sendable, Effect: Sendable {}
