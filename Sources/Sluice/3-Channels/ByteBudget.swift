/// One bound on the bytes buffered by many pipelines at once: each takes its share with
/// ``acquire(_:)`` before it buffers and gives it back with ``release(_:)``.
///
/// The budget is what keeps a copy of many files at once within a fixed memory, whatever the
/// count and sizes of the files: a file in flight holds its share until it is done, and the next
/// file waits for room.
///
/// - Grants are made in arrival order: a small request never overtakes a large one that waits
///   (no starvation).
/// - A request larger than the whole budget is granted, whole, when nothing else is held: it
///   then runs alone. It is not clamped, so ``held`` may exceed ``limit`` by that one request.
/// - ``acquire(_:)`` suspends its task (it never blocks a thread) until the bytes are granted.
///
/// ```swift
/// let budget = ByteBudget(limit: 64 << 20)
/// try await budget.acquire(share)
/// defer { budget.release(share) }
/// ```
///
/// ## Concurrency contract
/// Every method may be called from any task or thread. Waiters are resumed after the lock is
/// released. A cancelled ``acquire(_:)`` either throws `CancellationError` holding nothing (also
/// when the task was cancelled before it registered) or, if its grant came first, returns
/// holding its bytes: the caller then releases them as usual.
package final class ByteBudget: Sendable {
    typealias Continuation = UnsafeContinuation<Void, any Error>

    private let state: LockedValue<StateMachine<Continuation>>

    /// The bound, in bytes.
    package let limit: Int

    /// Creates a budget of `limit` bytes.
    ///
    /// - Precondition: `limit >= 1`.
    package init(limit: Int) {
        self.limit = limit
        state = LockedValue(StateMachine(limit: limit))
    }

    /// The bytes granted and not yet released.
    package var held: Int { state.withLock { $0.held } }

    /// The most bytes held at once since the budget was made.
    package var peakHeld: Int { state.withLock { $0.peakHeld } }

    /// The count of acquires waiting for room.
    package var waiting: Int { state.withLock { $0.waiters.count } }

    /// Takes `bytes` of the budget, waiting (suspended, in arrival order) until they fit.
    ///
    /// - Parameter bytes: the share to hold, >= 0; more than ``limit`` waits until nothing is
    ///   held, then is granted whole.
    /// - Throws: `CancellationError` if the task is cancelled before the grant; nothing is held then.
    package func acquire(_ bytes: Int) async throws(CancellationError) {
        precondition(bytes >= 0, "cannot acquire a negative count of bytes")
        if Task.isCancelled { throw CancellationError() }
        if state.withLock({ $0.tryAcquire(bytes: bytes) }) { return }
        let id = state.withLock { $0.makeID() }
        do {
            try await withTaskCancellationHandler {
                try await withUnsafeThrowingContinuation { (continuation: Continuation) in
                    let action = state.withLock { $0.acquire(id: id, bytes: bytes, continuation: continuation) }
                    switch action {
                    case .granted: continuation.resume()
                    case .cancelled: continuation.resume(throwing: CancellationError())
                    case .wait: break
                    }
                }
            } onCancel: {
                let (cancelled, granted) = state.withLock { $0.cancel(id: id) }
                cancelled?.resume(throwing: CancellationError())
                for waiter in granted { waiter.resume() }
            }
        } catch {
            throw CancellationError()
        }
    }

    /// Gives back `bytes` taken by ``acquire(_:)``, and lets the waiters they make room for go,
    /// in arrival order.
    ///
    /// - Precondition: at most ``held`` bytes are released.
    package func release(_ bytes: Int) {
        let granted = state.withLock { $0.release(bytes: bytes) }
        for waiter in granted { waiter.resume() }
    }
}
