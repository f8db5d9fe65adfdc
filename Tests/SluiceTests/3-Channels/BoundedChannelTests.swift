import Synchronization
import SluiceTestSupport
import Testing
@testable import Sluice

/// The channel with real tasks. Every order is made by events (a hook that fires once a task
/// is parked on its continuation), never by time; the time limit only guards against hangs. The
/// 40,000-send tests take about a second alone, and no longer beside the full suite on 2 cores
/// once no other test holds a thread of the cooperative pool (a byte-by-byte comparison of
/// megabytes on the pool once starved them for over a minute).
@Suite(.timeLimit(.minutes(3)))
struct BoundedChannelTests {
    struct Boom: Error, Equatable {}

    /// Counts events and lets a test wait until a number of them happened.
    final class EventCounter: Sendable {
        private struct State {
            var count = 0
            var waiters: [(target: Int, continuation: CheckedContinuation<Void, Never>)] = []
        }

        private let state = LockedValue(State())

        func record() {
            let ready = state.withLock { state in
                state.count += 1
                let count = state.count
                let ready = state.waiters.filter { $0.target <= count }.map(\.continuation)
                state.waiters.removeAll { $0.target <= count }
                return ready
            }
            for continuation in ready { continuation.resume() }
        }

        func wait(untilAtLeast target: Int) async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let reached = state.withLock { state in
                    if state.count >= target { return true }
                    state.waiters.append((target, continuation))
                    return false
                }
                if reached { continuation.resume() }
            }
        }
    }

    /// A channel whose parked senders and consumer are counted.
    static func makeChannel(
        capacity: Int,
        byteBudget: Int? = nil,
        weight: @escaping @Sendable (Int) -> Int = { _ in 0 }
    ) -> (channel: BoundedChannel<Int>, sendersParked: EventCounter, consumerParked: EventCounter) {
        let sendersParked = EventCounter()
        let consumerParked = EventCounter()
        let hooks = BoundedChannel<Int>.Hooks(
            senderSuspended: { _ in sendersParked.record() },
            consumerSuspended: { consumerParked.record() }
        )
        let channel = BoundedChannel(capacity: capacity, byteBudget: byteBudget, weight: weight, hooks: hooks)
        return (channel, sendersParked, consumerParked)
    }

    /// Sends and returns the error, if any.
    static func send<Element>(_ element: Element, to channel: BoundedChannel<Element>) async -> BoundedChannel<Element>.SendError? {
        do throws(BoundedChannel<Element>.SendError) {
            try await channel.send(element)
            return nil
        } catch {
            return error
        }
    }

    static func cancelCurrentTask() {
        withUnsafeCurrentTask { $0?.cancel() }
    }

    // MARK: Flow

    struct Item: Sendable, Equatable {
        var producer: Int
        var sequence: Int
    }

    struct Tally: Sendable {
        var attempted = 0
        var handedBack = 0
    }

    /// Runs `producers` senders of `perProducer` items into `channel` and a consumer that
    /// takes `consume` items (all if nil) then fails the channel; checks per-producer order
    /// and the no-loss invariant counted by the callers.
    ///
    /// Each producer and the consumer run on a thread of their own (a ``BlockingIOExecutor``
    /// each), so the tens of thousands of hand-overs between them are real cross-thread wake-ups
    /// and never wait in the cooperative pool's queue behind every other suite's work (there,
    /// the same test took over a minute on 2 cores instead of a second).
    static func runProducers(_ producers: Int, sending perProducer: Int, capacity: Int, consumerStopsAfter consume: Int?) async throws {
        try await withTaskExecutorPreference(BlockingIOExecutor(label: "test.consumer")) {
            try await runProducersOnTheirThreads(producers, sending: perProducer, capacity: capacity, consumerStopsAfter: consume)
        }
    }

    private static func runProducersOnTheirThreads(
        _ producers: Int, sending perProducer: Int, capacity: Int, consumerStopsAfter consume: Int?
    ) async throws {
        let channel = BoundedChannel<Item>(capacity: capacity)
        let received = try await withThrowingTaskGroup(of: Tally.self) { group in
            for producer in 0..<producers {
                group.addTask(executorPreference: BlockingIOExecutor(label: "test.producer")) {
                    var tally = Tally()
                    for sequence in 0..<perProducer {
                        tally.attempted += 1
                        if let error = await send(Item(producer: producer, sequence: sequence), to: channel) {
                            #expect(error.reason == .finished)
                            #expect(error.element == Item(producer: producer, sequence: sequence))
                            tally.handedBack += 1
                            break
                        }
                    }
                    return tally
                }
            }
            var lastSequence = [Int](repeating: -1, count: producers)
            var received = 0
            do {
                for try await item in channel {
                    #expect(item.sequence > lastSequence[item.producer], "producer \(item.producer) out of order")
                    lastSequence[item.producer] = item.sequence
                    received += 1
                    if received == consume { channel.fail(Boom()) }
                    if received == producers * perProducer { channel.finish() }
                }
                #expect(consume == nil)
            } catch is Boom {
                #expect(consume != nil)
            }
            var attempted = 0
            var handedBack = 0
            for try await tally in group {
                attempted += tally.attempted
                handedBack += tally.handedBack
            }
            #expect(attempted == received + handedBack)
            return received
        }
        if consume == nil { #expect(received == producers * perProducer) }
    }

    @Test func fourProducersLoseNothingAndKeepTheirOrder() async throws {
        try await Self.runProducers(4, sending: 10_000, capacity: 4, consumerStopsAfter: nil)
    }

    @Test func failingMidStreamHandsEveryUnsentElementBack() async throws {
        try await Self.runProducers(4, sending: 10_000, capacity: 4, consumerStopsAfter: 5_000)
    }

    @Test func sendSuspendsWhileTheBufferIsFullUntilNext() async throws {
        let (channel, sendersParked, _) = Self.makeChannel(capacity: 2)
        #expect(await Self.send(1, to: channel) == nil)
        #expect(await Self.send(2, to: channel) == nil)
        let returned = LockedValue(false)
        let third = Task {
            let error = await Self.send(3, to: channel)
            returned.withLock { $0 = true }
            return error
        }
        await sendersParked.wait(untilAtLeast: 1)
        #expect(returned.withLock { $0 } == false)
        #expect(channel.statistics.elementsBuffered == 2)

        var iterator = channel.makeAsyncIterator()
        #expect(try await iterator.next() == 1)
        #expect(await third.value == nil)
        #expect(try await iterator.next() == 2)
        #expect(try await iterator.next() == 3)

        let statistics = channel.statistics
        #expect(statistics.peakElementsBuffered == 2)
        #expect(statistics.suspensionCount == 1)
        #expect(statistics.suspendedDuration > .zero)
        #expect(statistics.elementsAccepted == 3 && statistics.elementsDelivered == 3)
    }

    @Test func consumerWaitsForTheNextSend() async throws {
        let (channel, _, consumerParked) = Self.makeChannel(capacity: 1)
        let consumer = Task {
            var iterator = channel.makeAsyncIterator()
            return try await iterator.next()
        }
        await consumerParked.wait(untilAtLeast: 1)
        #expect(await Self.send(7, to: channel) == nil)
        #expect(try await consumer.value == 7)
    }

    // MARK: Cancellation of senders

    @Test func cancelledSuspendedSenderGetsItsElementBack() async throws {
        let (channel, sendersParked, _) = Self.makeChannel(capacity: 1)
        #expect(await Self.send(1, to: channel) == nil)
        let sender = Task { await Self.send(2, to: channel) }
        await sendersParked.wait(untilAtLeast: 1)
        sender.cancel()
        #expect(await sender.value == BoundedChannel<Int>.SendError(reason: .cancelled, element: 2))

        channel.finish()
        var iterator = channel.makeAsyncIterator()
        #expect(try await iterator.next() == 1)
        #expect(try await iterator.next() == nil)
    }

    @Test func senderCancelledBeforeItMustWaitGetsItsElementBack() async throws {
        let (channel, _, _) = Self.makeChannel(capacity: 1)
        let outcomes = await Task {
            Self.cancelCurrentTask()
            // With room, the send enqueues without checking cancellation; without, it fails.
            return (await Self.send(1, to: channel), await Self.send(2, to: channel))
        }.value
        #expect(outcomes.0 == nil)
        #expect(outcomes.1 == BoundedChannel<Int>.SendError(reason: .cancelled, element: 2))
        #expect(channel.statistics.elementsAccepted == 1)
    }

    // MARK: The consumer going away

    /// Awaits two senders of which, once the consumer took one element and left, exactly one
    /// was admitted (into the buffer it then dropped) and one was handed its element back.
    static func expectOneAcceptedOneHandedBack(_ senders: [Task<BoundedChannel<Int>.SendError?, Never>], channel: BoundedChannel<Int>) async {
        var accepted = 0
        var handedBack: [Int] = []
        for sender in senders {
            if let error = await sender.value {
                #expect(error.reason == .consumerTerminated)
                handedBack.append(error.element)
            } else {
                accepted += 1
            }
        }
        #expect(accepted == 1 && handedBack.count == 1)
        #expect(channel.statistics.elementsDelivered == 1)
        #expect(channel.statistics.elementsDiscarded == 1)
        #expect(await send(4, to: channel) == BoundedChannel<Int>.SendError(reason: .consumerTerminated, element: 4))
    }

    @Test func consumerBreakingOutOfItsLoopReleasesSuspendedSenders() async throws {
        let (channel, sendersParked, _) = Self.makeChannel(capacity: 1)
        #expect(await Self.send(1, to: channel) == nil)
        let senders = [Task { await Self.send(2, to: channel) }, Task { await Self.send(3, to: channel) }]
        await sendersParked.wait(untilAtLeast: 2)
        do {
            for try await element in channel {
                #expect(element == 1)
                break
            }
        }
        await Self.expectOneAcceptedOneHandedBack(senders, channel: channel)
    }

    @Test func consumerThrowingOutOfItsLoopReleasesSuspendedSenders() async throws {
        let (channel, sendersParked, _) = Self.makeChannel(capacity: 1)
        #expect(await Self.send(1, to: channel) == nil)
        let senders = [Task { await Self.send(2, to: channel) }, Task { await Self.send(3, to: channel) }]
        await sendersParked.wait(untilAtLeast: 2)
        await #expect(throws: Boom.self) {
            for try await _ in channel { throw Boom() }
        }
        await Self.expectOneAcceptedOneHandedBack(senders, channel: channel)
    }

    @Test func consumerDroppingItsIteratorReleasesSuspendedSenders() async throws {
        let (channel, sendersParked, _) = Self.makeChannel(capacity: 1)
        #expect(await Self.send(1, to: channel) == nil)
        let sender = Task { await Self.send(2, to: channel) }
        await sendersParked.wait(untilAtLeast: 1)
        do {
            _ = channel.makeAsyncIterator()
        }
        #expect(await sender.value == BoundedChannel<Int>.SendError(reason: .consumerTerminated, element: 2))
        #expect(channel.statistics.elementsDiscarded == 1)
    }

    @Test func consumerCancelledBeforeNextReleasesSuspendedSenders() async throws {
        let (channel, sendersParked, _) = Self.makeChannel(capacity: 1)
        #expect(await Self.send(1, to: channel) == nil)
        let senders = [Task { await Self.send(2, to: channel) }, Task { await Self.send(3, to: channel) }]
        await sendersParked.wait(untilAtLeast: 2)
        let consumer = Task {
            var iterator = channel.makeAsyncIterator()
            Self.cancelCurrentTask()
            await #expect(throws: CancellationError.self) { try await iterator.next() }
            // Never nil after cancellation: a writer must not take it for the end.
            await #expect(throws: CancellationError.self) { try await iterator.next() }
        }
        await consumer.value
        var handedBack: Set<Int> = []
        for sender in senders {
            let error = try #require(await sender.value)
            #expect(error.reason == .consumerTerminated)
            handedBack.insert(error.element)
        }
        #expect(handedBack == [2, 3])
    }

    @Test func consumerCancelledWhileWaitingThrowsCancellationAndTerminates() async throws {
        let (channel, _, consumerParked) = Self.makeChannel(capacity: 1)
        let consumer = Task {
            var iterator = channel.makeAsyncIterator()
            return try await iterator.next()
        }
        await consumerParked.wait(untilAtLeast: 1)
        consumer.cancel()
        await #expect(throws: CancellationError.self) { try await consumer.value }
        #expect(await Self.send(1, to: channel) == BoundedChannel<Int>.SendError(reason: .consumerTerminated, element: 1))
    }

    // MARK: Finish and fail (case C23)

    @Test func failReleasesSuspendedSendersAndDeliversTheBufferFirst() async throws {
        let (channel, sendersParked, _) = Self.makeChannel(capacity: 1)
        #expect(await Self.send(1, to: channel) == nil)
        let senders = [Task { await Self.send(2, to: channel) }, Task { await Self.send(3, to: channel) }]
        await sendersParked.wait(untilAtLeast: 2)

        channel.fail(Boom())
        var handedBack: Set<Int> = []
        for sender in senders {
            let error = try #require(await sender.value)
            #expect(error.reason == .finished)
            handedBack.insert(error.element)
        }
        #expect(handedBack == [2, 3])

        var iterator = channel.makeAsyncIterator()
        #expect(try await iterator.next() == 1)
        await #expect(throws: Boom.self) { try await iterator.next() }
        await #expect(throws: Boom.self) { try await iterator.next() }
    }

    @Test func finishReleasesSuspendedSendersAndDeliversTheBufferFirst() async throws {
        let (channel, sendersParked, _) = Self.makeChannel(capacity: 1)
        #expect(await Self.send(1, to: channel) == nil)
        let senders = [Task { await Self.send(2, to: channel) }, Task { await Self.send(3, to: channel) }]
        await sendersParked.wait(untilAtLeast: 2)

        channel.finish()
        channel.fail(Boom())  // the first of finish and fail wins
        for sender in senders {
            #expect(try #require(await sender.value).reason == .finished)
        }
        var iterator = channel.makeAsyncIterator()
        #expect(try await iterator.next() == 1)
        #expect(try await iterator.next() == nil)
        #expect(try await iterator.next() == nil)
    }

    @Test func sendAfterFinishThrowsAtOnceWithTheElement() async {
        let channel = BoundedChannel<Int>(capacity: 4)
        channel.finish()
        #expect(await Self.send(5, to: channel) == BoundedChannel<Int>.SendError(reason: .finished, element: 5))
        #expect(channel.statistics.suspensionCount == 0)
    }

    // MARK: Byte budget

    @Test func byteBudgetSuspendsTheSendThatWouldExceedIt() async throws {
        let (channel, sendersParked, _) = Self.makeChannel(capacity: 8, byteBudget: 10, weight: { $0 })
        #expect(await Self.send(4, to: channel) == nil)
        #expect(await Self.send(4, to: channel) == nil)
        let third = Task { await Self.send(4, to: channel) }
        await sendersParked.wait(untilAtLeast: 1)
        #expect(channel.statistics.bytesBuffered == 8)

        var iterator = channel.makeAsyncIterator()
        #expect(try await iterator.next() == 4)
        #expect(await third.value == nil)
        #expect(channel.statistics.bytesBuffered == 8)
        #expect(channel.statistics.peakBytesBuffered == 8)
    }

    @Test func oversizedElementWaitsForAnEmptyBuffer() async throws {
        let (channel, sendersParked, _) = Self.makeChannel(capacity: 8, byteBudget: 10, weight: { $0 })
        #expect(await Self.send(1, to: channel) == nil)
        let oversized = Task { await Self.send(100, to: channel) }
        await sendersParked.wait(untilAtLeast: 1)

        var iterator = channel.makeAsyncIterator()
        #expect(try await iterator.next() == 1)
        #expect(await oversized.value == nil)  // admitted into the now empty buffer
        #expect(channel.statistics.bytesBuffered == 100)
        #expect(try await iterator.next() == 100)
        #expect(await Self.send(100, to: channel) == nil)  // empty buffer: no wait at all
        #expect(channel.statistics.suspensionCount == 1)
    }

    // MARK: Chunks

    @Test func chunkChannelWeighsChunksByTheirByteCount() async throws {
        let channel = BoundedChannel<Chunk>(capacity: 2, byteBudget: nil)
        #expect(await Self.send(Chunk([1, 2, 3, 4, 5]), to: channel) == nil)
        #expect(await Self.send(Chunk([6]), to: channel) == nil)
        channel.finish()
        var total = 0
        for try await chunk in channel { total += chunk.count }
        let statistics = channel.statistics
        #expect(total == 6)
        #expect(statistics.bytesAccepted == 6 && statistics.bytesDelivered == 6)
        #expect(statistics.peakBytesBuffered == 6)
    }

    // MARK: Programming errors

    @Test func secondIteratorStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            let channel = BoundedChannel<Int>(capacity: 1)
            _ = channel.makeAsyncIterator()
            _ = channel.makeAsyncIterator()
        }
    }

    @Test func capacityZeroStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            _ = BoundedChannel<Int>(capacity: 0)
        }
    }
}
