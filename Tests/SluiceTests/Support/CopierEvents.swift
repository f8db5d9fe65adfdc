@testable import Sluice

/// The events a ``Copier`` reports to its observer, counted, for a test to wait on instead of
/// looking at the engine's state: `Copier(..., observer: events.observer)`.
final class CopierEvents: Sendable {
    private struct State {
        var counts: [Copier.Event: Int] = [:]
        var waiters: [(event: Copier.Event, times: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = LockedCondition(State())

    /// The observer to give the engine.
    var observer: @Sendable (Copier.Event) -> Void {
        { [state] event in
            let ready = state.withLock { state in
                state.counts[event, default: 0] += 1
                let count = state.counts[event]!
                let ready = state.waiters.filter { $0.event == event && $0.times <= count }.map(\.continuation)
                state.waiters.removeAll { $0.event == event && $0.times <= count }
                return ready
            }
            for continuation in ready { continuation.resume() }
        }
    }

    /// How many times `event` happened.
    func count(_ event: Copier.Event) -> Int {
        state.withLock { $0.counts[event, default: 0] }
    }

    /// Returns once `event` happened `times` times.
    func wait(for event: Copier.Event, times: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let happened = state.withLock { state in
                if state.counts[event, default: 0] >= times { return true }
                state.waiters.append((event, times, continuation))
                return false
            }
            if happened { continuation.resume() }
        }
    }

    /// Blocks its thread (never the cooperative pool's) until `event` happened `times` times.
    func waitBlocking(for event: Copier.Event, times: Int = 1) {
        _ = state.wait { $0.counts[event, default: 0] >= times ? () : nil }
    }
}
