@testable import Sluice

/// A clock for pacing tests: its time moves only when a task sleeps on it, to the sleep's
/// deadline, at once. It records every sleep, so a test sees exactly the waits asked for, with
/// no real time passing and nothing depending on the machine's speed.
final class TestClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration

        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct State {
        var now = Duration.zero
        var sleeps: [Duration] = []
    }

    private let state = LockedValue(State())

    var now: Instant { Instant(offset: state.withLock { $0.now }) }
    var minimumResolution: Duration { .zero }

    /// The time slept in all.
    var elapsed: Duration { state.withLock { $0.now } }
    /// Each sleep's length, in order.
    var sleeps: [Duration] { state.withLock { $0.sleeps } }

    /// Moves the time to `deadline` (if it is later) and returns.
    ///
    /// - Throws: `CancellationError` when the task is cancelled.
    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        state.withLock { state in
            state.sleeps.append(deadline.offset - state.now)
            state.now = max(state.now, deadline.offset)
        }
    }
}

/// A clock whose sleeps never end by themselves: each waits until its task is cancelled, and
/// ``sleepers`` says how many have begun, so a test can cancel a task in the middle of a wait.
final class StoppedClock: Clock, Sendable {
    typealias Instant = TestClock.Instant

    private let started = LockedValue(0)
    private let waits = AsyncStream<Void>.makeStream()

    var now: Instant { Instant(offset: .zero) }
    var minimumResolution: Duration { .zero }

    /// Returns when a sleep has begun (one event per sleep).
    func firstSleep() async {
        var iterator = waits.stream.makeAsyncIterator()
        _ = await iterator.next()
    }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        try await withTaskCancellationHandler {
            started.withLock { $0 += 1 }
            waits.continuation.yield()
            for await _ in stream {}
            try Task.checkCancellation()
        } onCancel: {
            continuation.finish()
        }
    }
}

/// A clock whose sleeps wait until the test calls ``release()``; from then on it is a
/// ``TestClock``: a sleep moves the time to its deadline at once. A paced copy on it stops after
/// its first chunk until the test lets it go on.
final class HeldClock: Clock, Sendable {
    typealias Instant = TestClock.Instant

    private struct State {
        var now = Duration.zero
        var isReleased = false
        var nextWait = 0
        var waiting: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = LockedValue(State())

    var now: Instant { Instant(offset: state.withLock { $0.now }) }
    var minimumResolution: Duration { .zero }

    /// Ends every sleep, and every later one at once.
    func release() {
        let waiting = state.withLock { state in
            state.isReleased = true
            defer { state.waiting = [:] }
            return state.waiting
        }
        for continuation in waiting.values { continuation.resume() }
    }

    /// Waits until ``release()``, or until the task is cancelled (then throws
    /// `CancellationError`, as a clock's sleep does).
    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let key = state.withLock { state in
            defer { state.nextWait += 1 }
            return state.nextWait
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumesNow = state.withLock { state in
                    if state.isReleased || Task.isCancelled { return true }
                    state.waiting[key] = continuation
                    return false
                }
                if resumesNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiting.removeValue(forKey: key) }?.resume()
        }
        try Task.checkCancellation()
        state.withLock { $0.now = max($0.now, deadline.offset) }
    }
}
