import Synchronization

/// Fans an operation's ``ProgressSnapshot`` values out to any number of independent subscribers.
///
/// A pipeline or a copier has one (``Pipeline/progress``, ``Copier/progress``), made before it
/// starts and published to by it alone. Each call to ``subscribe()``
/// registers a subscriber synchronously and returns its own `AsyncStream`, buffered
/// `.bufferingNewest(1)`: a slow subscriber skips stale snapshots (a snapshot is complete, so
/// nothing is lost) and the data path never waits for it. Throttling a display (a 10 Hz redraw,
/// say) is the subscriber's concern, not a buffer setting.
///
/// ```swift
/// let copier = Copier()
/// let updates = copier.progress.subscribe()   // register before the copier can publish
/// let display = Task {
///     for await snapshot in updates { render(snapshot) }   // ends after the final snapshot
/// }
/// _ = try await copier.copyTree(from: "photos", to: "backup")
/// _ = await copier.finish()                    // publishes the final snapshot
/// await display.value
/// ```
///
/// ## Delivery guarantees
/// - A subscriber that registers after a snapshot was published starts with the latest one.
/// - The operation's final snapshot (``ProgressSnapshot/isFinal``, published once the copy has
///   committed or failed: by ``Pipeline/run()``, or by ``Copier/finish()`` for a copier) is
///   always the last element a subscriber receives before its stream ends, also when the
///   subscriber starts iterating late, and also when it subscribes after the operation ended
///   (it then gets exactly the final snapshot).
/// - Every subscriber's stream ends after the final snapshot, so every `for await` loop ends.
///   If the hub is released without a final snapshot (its copy was never run), the remaining
///   streams end without one.
///
/// ## Concurrency contract
/// ``subscribe()`` and ``latest`` may be called from any thread or task and never suspend.
/// Subscribers are independent: cancelling the task that iterates one stream, or breaking out
/// of its loop, terminates only that stream and removes only that subscriber.
///
/// Only the hub's operation publishes to it, and publishing never waits for a subscriber: no
/// lock is held while a snapshot is handed to a stream, and snapshots stay in order because
/// one publisher at a time delivers the newest snapshot to every subscriber that has not seen
/// it, while a publisher that finds a delivery under way only records its snapshot and
/// returns. The data path is never blocked by progress; at most it does a bounded amount of
/// delivery work for others.
public final class ProgressHub: Sendable {
    /// One registered subscriber.
    private struct Subscriber {
        var continuation: AsyncStream<ProgressSnapshot>.Continuation
        /// The ``State/version`` of the last snapshot yielded to this subscriber (0: none).
        var deliveredVersion: UInt64
    }

    /// The hub's state, guarded by ``state``.
    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        /// The newest snapshot (the final one once finished).
        var latest: ProgressSnapshot?
        /// Incremented on every accepted publish; 0 before the first.
        var version: UInt64 = 0
        var isFinished = false
        /// Whether some caller currently holds the deliverer role.
        var isDelivering = false
    }

    /// The work one delivery round performs outside the lock.
    private struct Round {
        var yields: [(AsyncStream<ProgressSnapshot>.Continuation, ProgressSnapshot)] = []
        var finishes: [AsyncStream<ProgressSnapshot>.Continuation] = []
        var isEmpty: Bool { yields.isEmpty && finishes.isEmpty }
    }

    private let state = LockedValue(State())
    private let nextSubscriberID = Atomic<Int>(0)

    /// Creates a hub with no subscribers and no snapshot.
    package init() {}

    deinit {
        // Weak references to `self` are already nil here, so `onTermination` handlers do nothing.
        let remaining = state.withLock { state in
            defer { state.subscribers.removeAll() }
            return state.subscribers.values.map(\.continuation)
        }
        for continuation in remaining { continuation.finish() }
    }

    /// Registers a new subscriber and returns its stream of snapshots.
    ///
    /// Registration happens before this method returns, so a snapshot published afterwards is
    /// waiting in the stream's buffer even if iteration starts much later. The stream is buffered
    /// `.bufferingNewest(1)`: it holds at most one pending snapshot, the newest.
    ///
    /// - If a snapshot was already published, the stream starts with the latest one.
    /// - If the operation already ended, the stream yields the final snapshot and then ends.
    ///
    /// Cancelling the task that iterates the stream, or ending the iteration early, terminates the
    /// stream and removes the subscriber; other subscribers are unaffected.
    ///
    /// - Returns: a stream for a single consumer that ends after the final snapshot.
    public func subscribe() -> AsyncStream<ProgressSnapshot> {
        let (stream, continuation) = AsyncStream<ProgressSnapshot>.makeStream(
            bufferingPolicy: .bufferingNewest(1)
        )
        let id = nextSubscriberID.add(1, ordering: .relaxed).newValue
        continuation.onTermination = { [weak self] _ in
            self?.removeSubscriber(id)
        }

        let alreadyFinished = state.withLock { state -> Bool in
            if state.isFinished { return true }
            state.subscribers[id] = Subscriber(continuation: continuation, deliveredVersion: 0)
            return false
        }
        if alreadyFinished {
            // Never registered: this continuation is ours alone, so no other caller can reorder
            // its elements. `latest` no longer changes once the hub finished.
            if let finalSnapshot = latest { continuation.yield(finalSnapshot) }
            continuation.finish()
        } else {
            deliver()
        }
        return stream
    }

    /// Publishes a snapshot to every current subscriber.
    ///
    /// Never blocks and never suspends. Each subscriber's buffer keeps only the newest snapshot,
    /// so a subscriber that is not iterating does not slow the caller. Ignored after
    /// `finish(with:)`.
    ///
    /// - Parameter snapshot: the newest complete reading; becomes ``latest``.
    package func publish(_ snapshot: ProgressSnapshot) {
        let accepted = state.withLock { state -> Bool in
            guard !state.isFinished else { return false }
            state.latest = snapshot
            state.version &+= 1
            return true
        }
        if accepted { deliver() }
    }

    /// Publishes the final snapshot and ends every subscriber's stream.
    ///
    /// Every subscriber receives `finalSnapshot` as its last element, then the end of its stream.
    /// Idempotent: the first call wins; later calls to `finish(with:)` and `publish(_:)` are
    /// ignored. Never blocks and never suspends.
    ///
    /// - Parameter finalSnapshot: the operation's last snapshot (normally with `isFinal == true`,
    ///   published after the destination is committed).
    package func finish(with finalSnapshot: ProgressSnapshot) {
        let accepted = state.withLock { state -> Bool in
            guard !state.isFinished else { return false }
            state.latest = finalSnapshot
            state.version &+= 1
            state.isFinished = true
            return true
        }
        if accepted { deliver() }
    }

    /// The newest snapshot published (the final one once finished), or `nil` before the first.
    public var latest: ProgressSnapshot? {
        state.withLock { $0.latest }
    }

    /// The number of subscribers whose streams are still open.
    ///
    /// A subscriber is removed when its stream terminates (its task is cancelled or its iteration
    /// ends) and when the hub finishes.
    package var subscriberCount: Int {
        state.withLock { $0.subscribers.count }
    }

    /// Removes a subscriber whose stream terminated; called from its `onTermination` handler.
    private func removeSubscriber(_ id: Int) {
        _ = state.withLock { state in
            state.subscribers.removeValue(forKey: id)
        }
    }

    /// Takes the deliverer role if it is free and delivers until nothing is pending.
    private func deliver() {
        var round = state.withLock { state -> Round? in
            guard !state.isDelivering else { return nil }
            let round = Self.takeRound(&state)
            if !round.isEmpty { state.isDelivering = true }
            return round
        }
        while let current = round, !current.isEmpty {
            for (continuation, snapshot) in current.yields {
                continuation.yield(snapshot)
            }
            for continuation in current.finishes {
                continuation.finish()
            }
            round = state.withLock { state -> Round? in
                let next = Self.takeRound(&state)
                if next.isEmpty { state.isDelivering = false }
                return next
            }
        }
    }

    /// Decides, under the lock, what the next delivery round does.
    ///
    /// Every subscriber that has not seen the newest snapshot gets it; once finished, every
    /// subscriber is removed and its stream is finished after its yield.
    private static func takeRound(_ state: inout State) -> Round {
        var round = Round()
        if let latest = state.latest {
            let version = state.version
            for index in state.subscribers.values.indices
            where state.subscribers.values[index].deliveredVersion < version {
                state.subscribers.values[index].deliveredVersion = version
                round.yields.append((state.subscribers.values[index].continuation, latest))
            }
        }
        if state.isFinished {
            round.finishes = state.subscribers.values.map(\.continuation)
            state.subscribers.removeAll()
        }
        return round
    }
}
