/// A first-in, first-out queue with amortised O(1) `append` and `popFirst`.
///
/// An array with a moving head: popped slots are cleared at once (so a popped element, such
/// as a chunk's bytes, is released when it leaves the queue, not later), and the array is
/// compacted when the dead prefix reaches half of it, or reset when the queue empties.
/// Not thread-safe; the channels keep it inside their lock.
@usableFromInline
struct FIFOBuffer<Item> {
    @usableFromInline var slots: [Item?] = []
    @usableFromInline var head = 0

    @inlinable
    init() {}

    /// The number of items in the queue.
    @inlinable
    var count: Int { slots.count &- head }

    /// Whether the queue holds no item.
    @inlinable
    var isEmpty: Bool { head == slots.count }

    /// Adds `item` at the end.
    @inlinable
    mutating func append(_ item: Item) {
        slots.append(item)
    }

    /// Removes and returns the first item, or returns nil when the queue is empty.
    @inlinable
    mutating func popFirst() -> Item? {
        guard head < slots.count else { return nil }
        let item = slots[head].take()
        head &+= 1
        if head == slots.count {
            slots.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 16 && head &* 2 >= slots.count {
            slots.removeFirst(head)
            head = 0
        }
        return item
    }

    /// Removes every item, keeping the storage.
    @inlinable
    mutating func removeAll() {
        slots.removeAll(keepingCapacity: true)
        head = 0
    }
}
