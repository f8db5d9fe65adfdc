extension PushBuffer {
    /// What happens to a yield that finds the buffer full.
    public struct OverflowPolicy: Sendable {
        @usableFromInline
        enum Kind: Sendable {
            case fail
            case spill(SpillConfiguration)
        }

        @usableFromInline let kind: Kind

        @usableFromInline
        init(kind: Kind) {
            self.kind = kind
        }

        /// Reject the element, hand it back, and fail the stream with ``CapacityExceededError``
        /// after every accepted element. The default.
        public static var fail: Self { Self(kind: .fail) }
    }
}

extension PushBuffer.OverflowPolicy where Element: SpillCodable {
    /// Past capacity, append elements to a spill file in `directory` and read them back in order.
    ///
    /// The file is created at the first spill with `O_CREAT | O_EXCL` and mode 0600 as
    /// `.sluice-spill-<random>.tmp` and unlinked at once, so its name never outlives the moment
    /// of creation and a crash leaves nothing behind; its space is released when the stream ends,
    /// fails or is cancelled (the descriptor is closed). The write happens on the yielding thread
    /// inside ``PushBuffer/yield(_:)`` (a regular-file `pwrite(2)`: bounded time, never a wait
    /// for the consumer); reading back runs on the buffer's blocking-I/O thread. Whenever the
    /// consumer has read every record, the next spill starts again at offset 0, so the file
    /// grows only with the backlog's peak. Each buffer made with this policy has a file of its
    /// own.
    ///
    /// The file's failures reach the consumer as ``FileError``s whose path is `directory`
    /// (`create`, `write`, `read`), after every element accepted before; a
    /// ``SpillCodingError`` when the element type's ``SpillCodable`` conversion fails;
    /// ``CapacityExceededError`` past `limit`.
    ///
    /// - Parameters:
    ///   - directory: where the spill file is created; it must be writable. A directory on the
    ///     same disk as the output keeps temporary space in one place.
    ///   - limit: the most bytes the spill file may hold (records with their 16-byte headers);
    ///     the yield that would pass it is rejected and the stream fails with
    ///     ``CapacityExceededError`` (``CapacityExceededError/spillLimit`` set).
    public static func spill(directory: Pathname, limit: Int64) -> Self {
        spill(limit: limit) { FileSpillStore(directory: directory) }
    }

    /// Past capacity, append elements to `store` and read them back in order.
    ///
    /// As ``spill(directory:limit:)``, with a store of the caller's (see `SpillStore` for what
    /// it must do, and on which threads). Appends run on the yielding thread inside
    /// ``PushBuffer/yield(_:)``, under the spill writer's lock; reads on the buffer's blocking-I/O
    /// thread. The buffer calls `SpillStore/close()` once its stream has ended.
    ///
    /// What the consumer's `next()` throws, after every element accepted before: the store's own
    /// errors as they are; a ``SpillCodingError`` when the element type's ``SpillCodable``
    /// conversion fails; ``CapacityExceededError`` past `limit`.
    ///
    /// - Parameters:
    ///   - store: where records go. It serves one buffer: make a policy (and a store) for each.
    ///   - limit: the most bytes the store may hold, each record counted as its bytes plus 16
    ///     (its length and weight); the yield that would pass it is rejected and the stream fails
    ///     with ``CapacityExceededError`` (``CapacityExceededError/spillLimit`` set).
    package static func spill(to store: some SpillStore, limit: Int64) -> Self {
        spill(limit: limit) { store }
    }

    private static func spill(limit: Int64, makeStore: @escaping @Sendable () -> any SpillStore) -> Self {
        precondition(limit >= 0, "spill limit must not be negative")
        return Self(kind: .spill(PushBuffer.SpillConfiguration(
            limit: limit, makeStore: makeStore,
            encode: { element, body in try element.withEncodedBytes(body) },
            decode: { count, read in try Element(decodingByteCount: count, from: read) })))
    }
}
