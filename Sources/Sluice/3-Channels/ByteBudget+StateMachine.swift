extension ByteBudget {
    /// The budget's decisions, as a value (generic over how a waiter is resumed, so tests can
    /// drive it with plain tokens): what is held, who waits, in arrival order. Each event
    /// returns what to do once the lock is released (resume a waiter, or several).
    struct StateMachine<Resumption> {
        /// A suspended `ByteBudget.acquire(_:)`: its id, the bytes it asks for, and how to resume it.
        struct Waiter {
            var id: Int
            var bytes: Int
            var continuation: Resumption
        }

        let limit: Int
        private(set) var held = 0
        private(set) var peakHeld = 0
        private(set) var waiters: [Waiter] = []
        /// Ids of acquires cancelled before they registered: they must not wait.
        private var cancelledBeforeRegistering: Set<Int> = []
        private var nextID = 0

        init(limit: Int) {
            precondition(limit >= 1, "a byte budget must allow at least 1 byte")
            self.limit = limit
        }

        /// A fresh id for an acquire, taken before it suspends (so a cancellation that comes
        /// before it registers is recognised).
        mutating func makeID() -> Int {
            defer { nextID += 1 }
            return nextID
        }

        /// Whether `bytes` may be granted now: nobody waits ahead (grants are in order), and
        /// they fit; a request larger than the whole budget fits only when nothing is held.
        private func fits(_ bytes: Int) -> Bool {
            held == 0 || held + bytes <= limit
        }

        enum AcquireAction {
            /// Granted at once: go on.
            case granted
            /// Cancelled before registering: throw, holding nothing.
            case cancelled
            /// Registered: stay suspended until resumed.
            case wait
        }

        /// An acquire of `bytes` arrives with its continuation.
        mutating func acquire(id: Int, bytes: Int, continuation: Resumption) -> AcquireAction {
            if cancelledBeforeRegistering.remove(id) != nil { return .cancelled }
            if waiters.isEmpty && fits(bytes) {
                grant(bytes)
                return .granted
            }
            waiters.append(Waiter(id: id, bytes: bytes, continuation: continuation))
            return .wait
        }

        /// The fast path, without a continuation: grants at once or says it cannot.
        mutating func tryAcquire(bytes: Int) -> Bool {
            guard waiters.isEmpty && fits(bytes) else { return false }
            grant(bytes)
            return true
        }

        /// `bytes` given back.
        ///
        /// - Returns: the waiters now granted, in arrival order, to resume.
        mutating func release(bytes: Int) -> [Resumption] {
            precondition(bytes >= 0 && bytes <= held, "released more bytes than were held")
            held -= bytes
            return grantWaiting()
        }

        /// The acquire `id` was cancelled.
        ///
        /// - Returns: its continuation to resume with `CancellationError` (`nil` if it had not
        ///   registered yet, or was already granted), and the waiters behind it that its
        ///   leaving lets through.
        mutating func cancel(id: Int) -> (cancelled: Resumption?, granted: [Resumption]) {
            if let index = waiters.firstIndex(where: { $0.id == id }) {
                let waiter = waiters.remove(at: index)
                return (waiter.continuation, index == 0 ? grantWaiting() : [])
            }
            // Not registered yet (or granted a moment ago, then the mark is never read):
            // remember, so it never waits.
            cancelledBeforeRegistering.insert(id)
            return (nil, [])
        }

        private mutating func grant(_ bytes: Int) {
            held += bytes
            peakHeld = max(peakHeld, held)
        }

        private mutating func grantWaiting() -> [Resumption] {
            var granted: [Resumption] = []
            while let first = waiters.first, fits(first.bytes) {
                waiters.removeFirst()
                grant(first.bytes)
                granted.append(first.continuation)
            }
            return granted
        }
    }
}
