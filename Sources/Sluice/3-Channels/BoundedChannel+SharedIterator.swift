extension BoundedChannel {
    /// The channel's one consumer, shared by a pool of tasks that each take an element when they
    /// are free: each ``next()`` takes the consumer's turn, takes the next element (waiting in
    /// the channel's `next()` while the buffer is empty), then lets the turn go and wakes the
    /// task that waited longest for it to try again (a task already running may take it first).
    ///
    /// A task that finds the turn free and an element buffered takes it without suspending, so
    /// a worker that ends one element starts the next on its own thread, waking nothing. The
    /// channel's single-consumer rule holds: the tasks call its iterator one at a time.
    ///
    /// ## Concurrency contract
    /// ``next()`` may be called from any number of tasks at once. A task waiting for the turn is
    /// not woken by its cancellation: it waits until the task that holds the turn returns, which
    /// happens once an element arrives, the channel ends (`finish()` or `fail(_:)`), or that
    /// task is cancelled (the channel is then terminated, and every later call throws
    /// `CancellationError`, so the turn goes round and every waiter returns).
    package final class SharedIterator: @unchecked Sendable {
        // @unchecked: `iterator` is used only by the task holding the turn, taken and let go
        // under the lock of `turn`.
        private var iterator: Iterator
        private let turn = LockedValue(Turn())

        private struct Turn {
            var isTaken = false
            /// The tasks waiting for the turn, longest first.
            var waiting: [CheckedContinuation<Void, Never>] = []
        }

        /// Becomes the consumer of `channel` (its one ``BoundedChannel/makeAsyncIterator()``).
        package init(_ channel: BoundedChannel) {
            iterator = channel.makeAsyncIterator()
        }

        /// The next element, as the channel's iterator gives it: `nil` once the channel has
        /// finished and is drained, and on every later call.
        ///
        /// - Throws: what the channel's iterator throws (the error given to `fail(_:)`, or
        ///   `CancellationError` once a consumer task was cancelled while waiting).
        package func next() async throws -> Element? {
            try await next { $0 }
        }

        /// The next element, given to `prepare` before the turn goes to another task, and what
        /// `prepare` made of it; `nil` at the end, as ``next()``. The tasks waiting for the turn
        /// wait for `prepare` too: a pool that admits its elements one at a time, in the
        /// channel's order, holds one element at most waiting to be admitted.
        ///
        /// - Throws: as ``next()``.
        package func next<Prepared>(preparing prepare: (Element) async -> Prepared) async throws -> Prepared? {
            await takeTurn()
            defer { passTurn() }
            guard let element = try await iterator.next() else { return nil }
            return await prepare(element)
        }

        /// The tasks waiting for the turn now (for tests that order an event after a wait).
        var tasksWaitingForTurn: Int { turn.withLock { $0.waiting.count } }

        /// Takes the turn, waiting while another task holds it. A task that returns the turn
        /// lets it free and wakes one waiter to try again: a task already running may take it
        /// first, so no task waits for one that is still being woken (the convoy a hand-over
        /// to a sleeping thread makes when every turn is short).
        private func takeTurn() async {
            while !tryTakingTurn(orWaitWith: nil) {
                await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                    // Let go meanwhile: try again at once.
                    if tryTakingTurn(orWaitWith: waiter) { waiter.resume() }
                }
            }
        }

        /// Takes the turn if it is free; else queues `waiter` (if any) to be woken when it is
        /// let go. A waiter that was resumed at once (`true`) took nothing: its task tries again.
        private func tryTakingTurn(orWaitWith waiter: CheckedContinuation<Void, Never>?) -> Bool {
            turn.withLock { turn in
                guard turn.isTaken else {
                    // Taken by the caller, unless it is a waiter, which tries again.
                    if waiter == nil { turn.isTaken = true }
                    return true
                }
                if let waiter { turn.waiting.append(waiter) }
                return false
            }
        }

        private func passTurn() {
            let next = turn.withLock { turn in
                turn.isTaken = false
                return turn.waiting.isEmpty ? nil : turn.waiting.removeFirst()
            }
            next?.resume()
        }
    }
}
