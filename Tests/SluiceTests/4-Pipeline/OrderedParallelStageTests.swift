import Dispatch
import SluiceTestSupport
import Testing
@testable import Sluice

/// One block's hold on its worker: the work function opens `started`, then blocks its worker's
/// thread until the test signals `release` (a blocking wait is fine there: each worker has a
/// thread of its own). The test decides when each block finishes, never a clock.
private final class Gate: Sendable {
    let started = Latch()
    let finished = Latch()
    let release = DispatchSemaphore(value: 0)

    static func make(_ count: Int) -> [Gate] { (0..<count).map { _ in Gate() } }
}

private struct WorkerFailure: Error, Equatable {
    var block: Int
}

/// Events the stage's hooks report, as a stream the test awaits.
private func hookEvents() -> (stream: AsyncStream<Void>, hook: @Sendable () -> Void) {
    let (stream, continuation) = AsyncStream<Void>.makeStream()
    return (stream, { continuation.yield() })
}

@Suite(.timeLimit(.minutes(3)))
struct OrderedParallelStageTests {
    /// Blocks finish in an order the test shuffles; results still leave in input order.
    @Test(arguments: [UInt64(1), 2, 3, 4])
    func resultsKeepTheInputOrderWhateverOrderWorkersFinishIn(seed: UInt64) async throws {
        let workers = 3
        let count = 24
        let gates = Gate.make(count)
        let completions = LockedValue<[Int]>([])
        let stage = OrderedParallelStage<Int, Int>(workerCount: workers, maximumInFlight: 2 * workers, work: { block in
            gates[block].started.open()
            gates[block].release.wait()
            completions.withLock { $0.append(block) }
            gates[block].finished.open()
            return block * 10
        })
        let consumer = Task {
            var results: [Int] = []
            for try await result in stage { results.append(result) }
            return results
        }
        let submitter = Task {
            for block in 0..<count { try await stage.submit(block) }
            stage.finish()
        }
        // A window of as many blocks as workers runs at once; the test finishes them in a
        // shuffled order, one after the other.
        var generator = SplitMix64(seed: seed)
        for window in stride(from: 0, to: count, by: workers) {
            let blocks = Array(window..<min(window + workers, count))
            for block in blocks { await gates[block].started.wait() }
            for block in blocks.shuffled(using: &generator) {
                gates[block].release.signal()
                await gates[block].finished.wait()
            }
        }
        try await submitter.value
        #expect(try await consumer.value == (0..<count).map { $0 * 10 })
        let finishedInOrder = completions.withLock { $0 } == Array(0..<count)
        #expect(!finishedInOrder, "the shuffles must make workers finish out of order")
    }

    /// A consumer that takes a result only once the submitter waits: the stage fills up to its
    /// bound each time, and the work function, told the count of results asked for, never sees
    /// a block beyond it.
    @Test(arguments: [(1, 1), (2, 3), (3, 6)])
    func blocksInFlightNeverExceedTheBound(workers: Int, bound: Int) async throws {
        let count = 40
        let requested = LockedValue(0)
        let excess = LockedValue<[Int]>([])
        let (suspensions, hook) = hookEvents()
        let stage = OrderedParallelStage<Int, Int>(
            workerCount: workers, maximumInFlight: bound, label: "test", makeWorker: {
                { block in
                    // Block `block` was submitted: blocks 0...block are in flight or handed out,
                    // and the consumer has asked for `requested` results.
                    let inFlight = block + 1 - requested.withLock { $0 }
                    if inFlight > bound { excess.withLock { $0.append(inFlight) } }
                    return block
                }
            }, hooks: .init(submitterSuspended: hook))
        let submitter = Task {
            for block in 0..<count { try await stage.submit(block) }
            stage.finish()
        }
        var suspended = suspensions.makeAsyncIterator()
        var results: [Int] = []
        for taken in 0..<count {
            // The submitter suspends on block `bound + taken` while there is one to submit.
            if bound + taken < count { _ = await suspended.next() }
            requested.withLock { $0 += 1 }
            results.append(try #require(try await stage.next()))
        }
        #expect(try await stage.next() == nil)
        try await submitter.value
        #expect(results == Array(0..<count))
        #expect(excess.withLock { $0 }.isEmpty)
        #expect(stage.peakInFlight == bound)
    }

    /// Backpressure: with nobody taking results, the submission past the bound waits until
    /// the oldest result is taken.
    @Test func aSlowConsumerSuspendsTheSubmitter() async throws {
        let (suspensions, hook) = hookEvents()
        let stage = OrderedParallelStage<Int, Int>(
            workerCount: 2, maximumInFlight: 2, label: "test", makeWorker: { { $0 } },
            hooks: .init(submitterSuspended: hook))
        let thirdReturned = LockedValue(false)
        let submitter = Task {
            for block in 0..<3 { try await stage.submit(block) }
            thirdReturned.withLock { $0 = true }
        }
        var suspended = suspensions.makeAsyncIterator()
        _ = await suspended.next()
        #expect(stage.isFull)
        #expect(!thirdReturned.withLock { $0 })
        #expect(try await stage.next() == 0)
        try await submitter.value
        #expect(thirdReturned.withLock { $0 })
        stage.finish()
        #expect(try await stage.next() == 1)
        #expect(try await stage.next() == 2)
        #expect(try await stage.next() == nil)
    }

    /// Cancelling the consumer while both workers hold a block and two more wait: the consumer
    /// and the submitter get `CancellationError`, the waiting blocks never start, `close()`
    /// returns once the two running ones are done, and the workers' state is released with the
    /// stage.
    @Test func cancellationWithWorkersBusyLeavesNothingRunning() async throws {
        let released = Latch()
        let workerStates = LockedValue(0)
        try await Self.cancelWithWorkersBusy {
            let state = WorkerState { if workerStates.withLock({ $0 -= 1; return $0 }) == 0 { released.open() } }
            workerStates.withLock { $0 += 1 }
            return state
        }
        // The stage is gone: its workers let go of their state (a leak would wait here until
        // the time limit).
        await released.wait()
    }

    private static func cancelWithWorkersBusy(makeState: @escaping @Sendable () -> WorkerState) async throws {
        let gates = Gate.make(4)
        let running = LockedValue(0)
        let started = LockedValue<[Int]>([])
        let (consumerWaits, hook) = hookEvents()
        let stage = OrderedParallelStage<Int, Int>(
            workerCount: 2, maximumInFlight: 4, label: "test", makeWorker: {
                let state = makeState()
                return { block in
                    _ = state
                    running.withLock { $0 += 1 }
                    started.withLock { $0.append(block) }
                    gates[block].started.open()
                    gates[block].release.wait()
                    running.withLock { $0 -= 1 }
                    return block
                }
            }, hooks: .init(consumerSuspended: hook))
        for block in 0..<4 { try await stage.submit(block) }
        await gates[0].started.wait()
        await gates[1].started.wait()

        let consumer = Task { try await stage.next() }
        var waits = consumerWaits.makeAsyncIterator()
        _ = await waits.next()
        consumer.cancel()
        await #expect(throws: CancellationError.self) { try await consumer.value }
        await #expect(throws: CancellationError.self) { try await stage.submit(4) }
        #expect(throws: CancellationError.self) { try stage.nextIfReady() }

        gates[0].release.signal()
        gates[1].release.signal()
        await stage.close()
        #expect(running.withLock { $0 } == 0)
        #expect(started.withLock { $0 }.sorted() == [0, 1], "a block queued before the cancellation started")
    }

    /// A worker's error reaches the consumer waiting for an earlier, still running block, and
    /// stays the answer after the cancellations it causes.
    @Test func aWorkersErrorWinsOverTheCancellationsItCauses() async throws {
        let gates = Gate.make(2)
        let (consumerWaits, hook) = hookEvents()
        let stage = OrderedParallelStage<Int, Int>(
            workerCount: 2, maximumInFlight: 4, label: "test", makeWorker: {
                { block in
                    gates[block].started.open()
                    gates[block].release.wait()
                    if block == 1 { throw WorkerFailure(block: 1) }
                    return block
                }
            }, hooks: .init(consumerSuspended: hook))
        try await stage.submit(0)
        try await stage.submit(1)
        await gates[0].started.wait()
        await gates[1].started.wait()
        let consumer = Task { try await stage.next() }
        var waits = consumerWaits.makeAsyncIterator()
        _ = await waits.next()

        gates[1].release.signal()  // block 1 fails while block 0 still runs
        await #expect(throws: WorkerFailure(block: 1)) { try await consumer.value }
        // What a pipeline does next: cancel everything. The worker's error stands.
        stage.cancel()
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await stage.next()
        }
        await #expect(throws: WorkerFailure(block: 1)) { try await cancelled.value }
        await #expect(throws: WorkerFailure(block: 1)) { try await stage.submit(2) }
        gates[0].release.signal()
        await stage.close()
        #expect(throws: WorkerFailure(block: 1)) { try stage.nextIfReady() }
    }

    /// A factory that throws fails the stage with its error, as the function's would.
    @Test func aWorkerFactorysErrorFailsTheStage() async throws {
        let stage = OrderedParallelStage<Int, Int>(workerCount: 1, makeWorker: { throw WorkerFailure(block: -1) })
        try await stage.submit(0)
        await #expect(throws: WorkerFailure(block: -1)) { try await stage.next() }
        await stage.close()
    }

    /// One task that submits and consumes, as a transform does: it takes a result while the
    /// stage is full, so it never waits for itself.
    @Test func oneTaskCanSubmitAndConsume() async throws {
        let stage = OrderedParallelStage<Int, Int>(workerCount: 2, maximumInFlight: 3, work: { $0 * $0 })
        var results: [Int] = []
        for block in 0..<50 {
            while let ready = try stage.nextIfReady() { results.append(ready) }
            while stage.isFull { results.append(try #require(try await stage.next())) }
            try await stage.submit(block)
        }
        stage.finish()
        while let result = try await stage.next() { results.append(result) }
        #expect(results == (0..<50).map { $0 * $0 })
        #expect(stage.peakInFlight <= 3)
        await stage.close()
    }

    @Test func noBlocksEndsAtOnce() async throws {
        let stage = OrderedParallelStage<Int, Int>(workerCount: 2, work: { $0 })
        #expect(stage.maximumInFlight == 8)
        stage.finish()
        #expect(try await stage.next() == nil)
        #expect(try stage.nextIfReady() == nil)
        await stage.close()
    }
}

/// A worker's own state, which reports when the stage lets go of it.
private final class WorkerState: Sendable {
    let onRelease: @Sendable () -> Void
    init(onRelease: @escaping @Sendable () -> Void) { self.onRelease = onRelease }
    deinit { onRelease() }
}
