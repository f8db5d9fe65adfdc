/// The buffer of a ``BoundedChannel`` or a ``PushBuffer``: a first-in, first-out queue of
/// elements with their weights, bounded by a count and optionally by bytes, that remembers how
/// full it got.
///
/// The admission rule: an element enters while fewer than `capacity` elements are queued and,
/// with a byte budget, while the queued bytes plus its weight stay within the budget. An element
/// heavier than the whole budget enters only an empty queue, so it can never wait (or be refused)
/// forever. The queue does not enforce the rule on ``append(_:weight:)``: its owner decides, with
/// ``admits(weight:)``, whether an element enters or waits (or spills).
///
/// Elements a consumer took in a batch (``hold(weight:)``) stay counted by the admission rule
/// until it asks for more (``releaseHeld()``): the memory bound covers them while the consumer
/// still holds them.
///
/// Not thread-safe; it lives inside the lock of its channel.
@usableFromInline
struct WeightedQueue<Element> {
    /// An element with its weight in bytes.
    @usableFromInline
    struct Item {
        @usableFromInline var element: Element
        @usableFromInline var weight: Int

        @inlinable
        init(element: Element, weight: Int) {
            self.element = element
            self.weight = weight
        }
    }

    /// The most elements admitted (>= 1).
    @usableFromInline let capacity: Int
    /// The most bytes (sum of weights) admitted, if bounded (>= 0).
    @usableFromInline let byteBudget: Int?
    @usableFromInline var items = FIFOBuffer<Item>()
    /// The sum of the queued elements' weights.
    @usableFromInline var bytes = 0
    /// Elements taken in a batch and not yet handed on, and their bytes.
    @usableFromInline var heldCount = 0
    @usableFromInline var heldBytes = 0
    /// The most elements queued at once (an element that passed through counts as one).
    @usableFromInline var peakCount = 0
    /// The most bytes queued at once.
    @usableFromInline var peakBytes = 0

    /// Creates an empty queue; `capacity` and `byteBudget` have been checked by the owner.
    @inlinable
    init(capacity: Int, byteBudget: Int?) {
        self.capacity = capacity
        self.byteBudget = byteBudget
    }

    /// The number of queued elements.
    @inlinable
    var count: Int { items.count }

    /// Whether no element is queued.
    @inlinable
    var isEmpty: Bool { items.isEmpty }

    /// The admission rule for a queue holding `count` elements of `bytes` bytes: whether an
    /// element of `weight` bytes may enter. Also used to read spilled records back, so the
    /// memory bound holds for them as for new elements.
    @inlinable
    static func admits(weight: Int, count: Int, bytes: Int, capacity: Int, byteBudget: Int?) -> Bool {
        if count == 0 { return true }
        guard count < capacity else { return false }
        guard let byteBudget else { return true }
        return bytes + weight <= byteBudget
    }

    /// Whether an element of `weight` bytes may enter now (held elements count as queued).
    @inlinable
    func admits(weight: Int) -> Bool {
        Self.admits(
            weight: weight, count: count + heldCount, bytes: bytes + heldBytes, capacity: capacity, byteBudget: byteBudget)
    }

    /// The elements queued and held, which the admission rule counts.
    @inlinable
    var occupiedCount: Int { count + heldCount }

    /// The consumer took an element of `weight` bytes in a batch: it counts until ``releaseHeld()``.
    @inlinable
    mutating func hold(weight: Int) {
        heldCount += 1
        heldBytes += weight
    }

    /// The consumer asks for more: what it held is handed on. Returns whether it held anything.
    @inlinable
    mutating func releaseHeld() -> Bool {
        defer {
            heldCount = 0
            heldBytes = 0
        }
        return heldCount > 0
    }

    /// Puts `element` at the end and raises the peaks.
    @inlinable
    mutating func append(_ element: Element, weight: Int) {
        items.append(Item(element: element, weight: weight))
        bytes += weight
        notePeak(count: count + heldCount, bytes: bytes + heldBytes)
    }

    /// Removes and returns the first element with its weight, or nil when the queue is empty.
    @inlinable
    mutating func popFirst() -> Item? {
        guard let item = items.popFirst() else { return nil }
        bytes -= item.weight
        return item
    }

    /// An element of `weight` bytes went straight to the consumer: it was held alone, for an
    /// instant, and counts in the peaks as such.
    @inlinable
    mutating func notePassedThrough(weight: Int) {
        notePeak(count: 1, bytes: weight)
    }

    /// Empties the queue; returns what it held.
    @inlinable
    mutating func removeAll() -> (count: Int, bytes: Int) {
        defer {
            items.removeAll()
            bytes = 0
            heldCount = 0
            heldBytes = 0
        }
        return (count, bytes)
    }

    @inlinable
    mutating func notePeak(count: Int, bytes: Int) {
        peakCount = Swift.max(peakCount, count)
        peakBytes = Swift.max(peakBytes, bytes)
    }

    /// Stops the program if the queue breaks its bounds (debug builds only; O(1)).
    @inlinable
    func checkInvariants(owner: StaticString) {
        assert(bytes >= 0, "\(owner) holds negative bytes")
        assert(count + heldCount <= capacity, "\(owner) holds \(count + heldCount) of \(capacity) elements")
        assert(
            byteBudget.map { bytes + heldBytes <= $0 || count + heldCount == 1 } ?? true,
            "\(owner) holds \(bytes) bytes past its budget")
        assert(peakCount >= count + heldCount && peakBytes >= bytes + heldBytes, "\(owner) holds more than its peak")
    }
}

extension WeightedQueue.Item: Sendable where Element: Sendable {}
