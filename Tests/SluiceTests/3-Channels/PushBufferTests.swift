import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Sluice
import SluiceTestSupport

/// The push buffer with real tasks and threads. Every order is made by events (everything
/// produced before the consumer starts, or a consumer that cancels itself at a chosen element),
/// never by time; the time limits only guard against hangs.
@Suite(.timeLimit(.minutes(3)))
struct PushBufferTests {
    struct Boom: Error {}

    static func drain<Element>(_ buffer: PushBuffer<Element>) async -> (elements: [Element], error: (any Error)?) {
        var elements: [Element] = []
        do {
            for try await element in buffer { elements.append(element) }
            return (elements, nil)
        } catch {
            return (elements, error)
        }
    }

    // MARK: Overflow with the fail policy: the first refused yield ends the stream (C26)

    @Test func fiveYieldsIntoCapacityFourDeliverFourThenTheCapacityError() async throws {
        let buffer = PushBuffer<Int>(capacity: 4)
        let source = LockingSource()
        do {
            buffer.onCancel { source.stop() }
            var results: [PushBuffer<Int>.YieldResult] = []
            for value in 1...5 { results.append(buffer.yield(value, offset: Int64(value) * 100)) }
            for result in results.prefix(4) {
                guard case .enqueued = result else { Issue.record("accepted yield answered \(result)"); return }
            }
            guard case .rejected(5, offset: 500) = results[4] else {
                Issue.record("fifth yield answered \(results[4])"); return
            }
            guard case .rejected(6, offset: nil) = buffer.yield(6) else { Issue.record("later yield accepted"); return }

            var iterator = buffer.makeAsyncIterator()
            var received: [Int] = []
            for _ in 1...4 { received.append(try #require(try await iterator.next())) }
            #expect(received == [1, 2, 3, 4])
            let error = try await #require(throws: CapacityExceededError.self) { try await iterator.next() }
            #expect(error == CapacityExceededError(capacity: 4, bufferedCount: 4, bufferedBytes: 0))
            // The end is sticky and the hook does not run again.
            await #expect(throws: CapacityExceededError.self) { try await iterator.next() }
        }
        await source.stopped.wait()
        await buffer.stopsScheduledSoFarHaveRun()
        #expect(source.stops == 1)
    }

    // MARK: Watermarks

    @Test func pauseIsAnsweredFromTheCrossingUntilDrainedBelowLow() async throws {
        let buffer = PushBuffer<Int>(capacity: 8, highWatermark: 4, lowWatermark: 2)
        var demands: [PushBuffer<Int>.Demand] = []
        for value in 1...6 {
            guard case .enqueued(let demand) = buffer.yield(value) else { Issue.record("not enqueued"); return }
            demands.append(demand)
        }
        #expect(demands == [.keepGoing, .keepGoing, .keepGoing, .pause, .pause, .pause])
        var iterator = buffer.makeAsyncIterator()
        for _ in 1...4 { _ = try await iterator.next() }  // 2 left: not below low yet
        guard case .enqueued(.pause) = buffer.yield(7) else { Issue.record("resumed too early"); return }
        for _ in 1...2 { _ = try await iterator.next() }  // 1 left: below low
        guard case .enqueued(.keepGoing) = buffer.yield(8) else { Issue.record("not resumed"); return }
    }

    @Test func resumeCallbackRunsOncePerCrossingOfLow() async throws {
        let buffer = PushBuffer<Int>(capacity: 8, highWatermark: 4, lowWatermark: 2)
        var iterator = buffer.makeAsyncIterator()
        try await confirmation("resume", expectedCount: 3) { resumed in
            buffer.onResume { resumed() }
            for round in 0..<3 {
                for value in 0..<6 { buffer.yield(round * 10 + value) }  // crosses high
                for _ in 0..<6 { _ = try await iterator.next() }  // crosses low once
            }
            // Draining without a pause first never resumes.
            buffer.yield(99)
            _ = try await iterator.next()
        }
    }

    @Test func resumeCallbackMayYieldAgain() async throws {
        let buffer = PushBuffer<Int>(capacity: 4, highWatermark: 2, lowWatermark: 1)
        let nextValue = Mutex(3)
        buffer.onResume {
            // Runs outside the lock, on the consumer's task: yielding here must not deadlock.
            let value = nextValue.withLock { value in
                defer { value += 1 }
                return value
            }
            if value <= 6 { buffer.yield(value) } else { buffer.finish() }
            if value <= 6 { buffer.yield(value * 100) }
        }
        buffer.yield(1)
        buffer.yield(2)  // pause
        let (elements, error) = await Self.drain(buffer)
        #expect(error == nil)
        #expect(elements == [1, 2, 3, 300, 4, 400, 5, 500, 6, 600])
    }

    /// A resume callback that captures the buffer (as one that yields does) must not keep the
    /// buffer alive once its consumer is gone: LeakSanitizer found that cycle.
    @Test func resumeCallbackIsReleasedWhenTheConsumerIsGone() async throws {
        final class Captured: Sendable {}
        weak var captured: Captured?
        let buffer = PushBuffer<Int>(capacity: 4)
        do {
            let object = Captured()
            captured = object
            buffer.onResume { _ = object }
            var iterator = buffer.makeAsyncIterator()
            buffer.yield(1)
            #expect(try await iterator.next() == 1)
            #expect(captured != nil)
        }
        #expect(captured == nil)
    }

    // MARK: Cancellation and the gate

    @Test func hookInstalledAfterTheConsumerLeftRunsAtOnce() async {
        let buffer = PushBuffer<Int>(capacity: 4)
        buffer.yield(1)
        do {
            var iterator = buffer.makeAsyncIterator()
            _ = try? await iterator.next()
        }  // the iterator is dropped: the consumer left
        guard case .terminated(2) = buffer.yield(2) else { Issue.record("yield after the consumer left accepted"); return }
        let source = LockingSource()
        buffer.onCancel { source.stop() }  // scheduled at once
        await source.stopped.wait()
        await buffer.stopsScheduledSoFarHaveRun()
        #expect(source.stops == 1)
        #expect(buffer.statistics.elementsDiscarded == 0)
    }

    @Test func hookRunsOnceWhenTheConsumerIsCancelledAndThenDropsItsIterator() async {
        let buffer = PushBuffer<Int>(capacity: 4)
        let source = LockingSource()
        do {
            buffer.onCancel { source.stop() }
            buffer.yield(1)
            buffer.yield(2)
            let consumer = Task {
                var iterator = buffer.makeAsyncIterator()
                let first = try await iterator.next()
                withUnsafeCurrentTask { $0?.cancel() }
                await #expect(throws: CancellationError.self) { try await iterator.next() }
                await #expect(throws: CancellationError.self) { try await iterator.next() }
                return first
            }
            #expect(try! await consumer.value == 1)
        }
        await source.stopped.wait()
        await buffer.stopsScheduledSoFarHaveRun()
        #expect(source.stops == 1)
        #expect(buffer.statistics.elementsDiscarded == 1)
        guard case .terminated = buffer.yield(3) else { Issue.record("accepted after cancellation"); return }
    }

    @Test func consumerCancelledWhileWaitingEndsAndStopsTheSource() async {
        let buffer = PushBuffer<Int>(capacity: 4)
        let source = LockingSource()
        buffer.onCancel { source.stop() }
        let consumer = Task {
            var iterator = buffer.makeAsyncIterator()
            return try await iterator.next()
        }
        consumer.cancel()
        await #expect(throws: CancellationError.self) { try await consumer.value }
        await source.stopped.wait()
        await buffer.stopsScheduledSoFarHaveRun()
        #expect(source.stops == 1)
    }

    @Test func callbackSourceFailureReachesTheConsumerAfterItsValues() async {
        let buffer = PushBuffer<Int>.fromCallbacks(capacity: 8) { deliver, complete in
            _ = deliver(1)
            complete(Boom())
            return {}
        }
        let (elements, error) = await Self.drain(buffer)
        #expect(elements == [1])
        #expect(error is Boom)
    }

    @Test func elementHandedToAWaitingConsumerCountsInThePeaks() async throws {
        let buffer = PushBuffer<Int>(capacity: 4, weight: { $0 })
        let consumer = Task {
            var iterator = buffer.makeAsyncIterator()
            return try await iterator.next()
        }
        // Wait until the consumer is parked in next(): the yield then hands over directly.
        while !buffer.storage.machine.withLock({ if case .waiting = $0.core.consumer { true } else { false } }) {
            await Task.yield()
        }
        guard case .enqueued(.keepGoing) = buffer.yield(7) else { Issue.record("not taken"); return }
        #expect(try await consumer.value == 7)
        let statistics = buffer.statistics
        #expect(statistics.elementsBuffered == 0)
        #expect(statistics.peakElementsBuffered == 1 && statistics.peakBytesBuffered == 7)
    }

    // MARK: Stress

    /// Producers on several threads, a consumer that stops at a seeded random point (cancelled
    /// or breaking out): every element is delivered exactly once, or discarded with the
    /// consumer's departure, or handed back to its producer. The rounds run one at a time: each
    /// has four producer threads of its own, and twelve rounds at once would keep every core
    /// busy for the rest of the suite.
    @Test(.serialized, arguments: 0..<12)
    func producersOnThreadsAndARandomlyStoppedConsumerLoseNothing(round: Int) async throws {
        let seed = UInt64(0x5EED_0000) + UInt64(round)
        var random = SplitMix64(seed: seed)
        let producers = 4
        let perProducer = 3_000
        let spills = round % 2 == 1
        let capacity = Int(random.next() % 128) + 1
        let stopAfter = Int(random.next() % UInt64(producers * perProducer + 200))
        let breaksOut = random.next() % 2 == 0
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let buffer = PushBuffer<Chunk>(
            capacity: capacity, byteBudget: nil,
            policy: spills ? .spill(directory: directory.path, limit: 1 << 30) : .fail)

        let consumer = Task {
            var delivered: [(producer: Int, sequence: Int)] = []
            do {
                for try await chunk in buffer {
                    let words = chunk.withUnsafeBytes { Array($0.bindMemory(to: Int.self)) }
                    delivered.append((words[0], words[1]))
                    if delivered.count == stopAfter {
                        if breaksOut { break }
                        withUnsafeCurrentTask { $0?.cancel() }
                    }
                }
            } catch {}
            return delivered
        }
        // Producers on threads of their own (not Dispatch's pool, which the runtime shares and
        // a loaded machine can keep busy for a minute).
        let accepted = await withCheckedContinuation { (continuation: CheckedContinuation<[[Int]], Never>) in
            let results = LockedValue([[Int]](repeating: [], count: producers))
            let remaining = LockedValue(producers)
            for producer in 0..<producers {
                DedicatedThread.start(name: "producer") {
                    var mine: [Int] = []
                    var returned = 0
                    for sequence in 0..<perProducer {
                        let chunk = Chunk([producer, sequence].withUnsafeBytes { Array($0) })
                        switch buffer.yield(chunk) {
                        case .enqueued, .spilled: mine.append(sequence)
                        case .rejected(let back, _), .terminated(let back):
                            #expect(back == chunk, "seed \(seed)")
                            returned += 1
                        }
                    }
                    #expect(mine.count + returned == perProducer, "seed \(seed)")
                    results.withLock { $0[producer] = mine }
                    let isLast = remaining.withLock { count in
                        count -= 1
                        return count == 0
                    }
                    if isLast {
                        buffer.finish()
                        continuation.resume(returning: results.withLock { $0 })
                    }
                }
            }
        }
        let delivered = await consumer.value
        let statistics = buffer.statistics
        let acceptedCount = accepted.reduce(0) { $0 + $1.count }
        #expect(acceptedCount == delivered.count + statistics.elementsDiscarded, "seed \(seed)")
        var lastSequence = [Int](repeating: -1, count: producers)
        var acceptedSets = accepted.map(Set.init)
        for (producer, sequence) in delivered {
            #expect(sequence > lastSequence[producer], "out of order or duplicated; seed \(seed)")
            lastSequence[producer] = sequence
            #expect(acceptedSets[producer].remove(sequence) != nil, "delivered but not accepted; seed \(seed)")
        }
    }
}
