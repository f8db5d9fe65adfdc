/// What the suspended consumer of a ``BoundedChannel`` or a ``PushBuffer`` is woken with.
@usableFromInline
enum ConsumerWake<Element> {
    /// The next element, handed over directly.
    case element(Element)
    /// The end of the stream: the consumer returns nil.
    case end
    /// The stream's error (or `CancellationError` when the consumer went away).
    case failure(any Error)
    /// Something arrived that is not an element yet (a spilled record): ask the machine again.
    case retry
}

extension ConsumerWake: Sendable where Element: Sendable {}
