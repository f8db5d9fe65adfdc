@testable import Sluice
import SluiceTestSupport
import Testing

/// The hand-offs that make small elements cheap: a low watermark for resuming senders, batches
/// taken at once (and still counted until handed on), and a consumer woken once per batch.
/// Events are driven on the state machine in the hostile orders, then once through real tasks.
@Suite struct BoundedChannelBatchTests {
    typealias Machine = BoundedChannel<Int>.StateMachine<Int, Int>
    typealias Helpers = BoundedChannelStateMachineTests

    /// Fills a machine of `capacity` with 1...capacity, then parks sender 100 with element 99.
    static func fullWithWaitingSender(capacity: Int, lowWatermark: Int?) throws -> Machine {
        var machine = Machine(capacity: capacity, byteBudget: nil, lowWatermark: lowWatermark)
        for element in 1...capacity { #expect(Helpers.isComplete(machine.send(element, weight: 1))) }
        let id = try Helpers.suspendedID(machine.send(99, weight: 1))
        guard case .wait = machine.senderSuspended(id: id, sender: 100) else {
            Issue.record("a sender with no room must wait")
            throw CancellationError()
        }
        return machine
    }

    @Test func aWaitingSenderResumesOnlyAtTheLowWatermark() throws {
        var machine = try Self.fullWithWaitingSender(capacity: 4, lowWatermark: 1)
        #expect(Helpers.returned(machine.next())?.senders == [])  // 3 buffered
        #expect(Helpers.returned(machine.next())?.senders == [])  // 2 buffered
        let third = Helpers.returned(machine.next())  // 1 buffered: at the watermark
        #expect(third?.element == 3)
        #expect(third?.senders == [.sent(100)])
        #expect(Helpers.returned(machine.next())?.element == 4)
        #expect(Helpers.returned(machine.next())?.element == 99)
    }

    @Test func withoutALowWatermarkASenderResumesAsSoonAsThereIsRoom() throws {
        var machine = try Self.fullWithWaitingSender(capacity: 4, lowWatermark: nil)
        #expect(Helpers.returned(machine.next())?.senders == [.sent(100)])
    }

    @Test func aBatchCountsAgainstTheCapacityUntilTheNextCall() throws {
        var machine = Machine(capacity: 4, byteBudget: nil)
        for element in 1...4 { #expect(Helpers.isComplete(machine.send(element, weight: 10))) }
        #expect(Helpers.returned(machine.next())?.element == 1)
        #expect(machine.takeAvailable(upTo: 10) == [2, 3, 4])
        // Three elements are still in the consumer's hands: room for one more only.
        #expect(Helpers.isComplete(machine.send(5, weight: 10)))
        let id = try Helpers.suspendedID(machine.send(6, weight: 10))
        guard case .wait = machine.senderSuspended(id: id, sender: 60) else {
            Issue.record("the held batch must keep the channel full"); return
        }
        #expect(machine.statistics.peakElementsBuffered == 4)
        #expect(machine.statistics.elementsDelivered == 4)
        // The next call hands the batch on: the sender fits, and the element comes in order.
        let next = Helpers.returned(machine.next())
        #expect(next?.element == 5)
        #expect(next?.senders == [.sent(60)])
        #expect(Helpers.returned(machine.next())?.element == 6)
    }

    @Test func aBatchIsBoundedByItsMaximumAndTheByteBudget() throws {
        var machine = Machine(capacity: 8, byteBudget: 30)
        for element in 1...3 { #expect(Helpers.isComplete(machine.send(element, weight: 10))) }
        #expect(Helpers.returned(machine.next())?.element == 1)
        #expect(machine.takeAvailable(upTo: 1) == [2])
        #expect(machine.takeAvailable(upTo: 5) == [3])
        #expect(machine.takeAvailable(upTo: 5) == [])
        // 20 bytes held and none buffered: 10 more fit, 20 do not.
        #expect(Helpers.isComplete(machine.send(4, weight: 10)))
        _ = try Helpers.suspendedID(machine.send(5, weight: 10))
    }

    /// A consumer waiting on an empty channel with a wake threshold of `threshold`.
    static func waitingConsumer(capacity: Int, threshold: Int) throws -> Machine {
        var machine = Machine(capacity: capacity, byteBudget: nil, consumerWakeThreshold: threshold)
        let id = try Helpers.consumerSuspendID(machine.next())
        guard case .wait = machine.consumerSuspended(id: id, consumer: 7) else {
            Issue.record("an empty open channel must park its consumer")
            throw CancellationError()
        }
        return machine
    }

    @Test func theConsumerIsWokenOncePerBatch() throws {
        var machine = try Self.waitingConsumer(capacity: 8, threshold: 3)
        #expect(Helpers.isComplete(machine.send(1, weight: 0)))
        #expect(Helpers.isComplete(machine.send(2, weight: 0)))
        guard case .wakeConsumer(7) = machine.send(3, weight: 0) else {
            Issue.record("the third element must wake the consumer"); return
        }
        #expect(Helpers.returned(machine.next())?.element == 1)
        #expect(machine.takeAvailable(upTo: 8) == [2, 3])
    }

    @Test func flushWakesAConsumerWaitingBelowItsThreshold() throws {
        var machine = try Self.waitingConsumer(capacity: 8, threshold: 4)
        #expect(machine.flush() == nil)  // nothing buffered: nothing to wake it for
        #expect(Helpers.isComplete(machine.send(1, weight: 0)))
        #expect(machine.flush() == 7)
        #expect(machine.flush() == nil)  // already woken
        #expect(Helpers.returned(machine.next())?.element == 1)
    }

    @Test func finishingWithElementsBelowTheThresholdDeliversThemBeforeTheEnd() throws {
        var machine = try Self.waitingConsumer(capacity: 8, threshold: 4)
        #expect(Helpers.isComplete(machine.send(1, weight: 0)))
        let released = Helpers.released(machine.finish())
        #expect(released?.consumer == 7)
        guard case .retry = released?.wake else {
            Issue.record("the consumer must come back for the buffered element, got \(String(describing: released?.wake))")
            return
        }
        #expect(Helpers.returned(machine.next())?.element == 1)
        guard case .returnNil = machine.next() else { Issue.record("then the end"); return }
    }

    @Test func aSenderThatMustWaitWakesTheConsumerFirst() throws {
        // A byte budget can fill the channel before the threshold is reached: the consumer
        // must be woken, or the two would wait for each other.
        var machine = Machine(capacity: 8, byteBudget: 10, consumerWakeThreshold: 4)
        let id = try Helpers.consumerSuspendID(machine.next())
        guard case .wait = machine.consumerSuspended(id: id, consumer: 7) else { Issue.record("must park"); return }
        #expect(Helpers.isComplete(machine.send(1, weight: 10)))
        guard case .suspend(_, wakingConsumer: 7) = machine.send(2, weight: 10) else {
            Issue.record("the waiting sender must wake the consumer"); return
        }
    }

    // A hang guard sized for the full suite on 2 cores.
    /// The producer and the consumer on threads of their own, as in ``BoundedChannelTests``.
    @Test(.timeLimit(.minutes(3))) func aFullChannelOfSmallElementsArrivesInOrderThroughBatches() async throws {
        try await withTaskExecutorPreference(BlockingIOExecutor(label: "test.consumer")) {
            try await Self.smallElementsThroughBatches()
        }
    }

    private static func smallElementsThroughBatches() async throws {
        let channel = BoundedChannel<Int>(capacity: 16, lowWatermark: 8, consumerWakeThreshold: 8)
        let count = 10_000
        let producer = Task(executorPreference: BlockingIOExecutor(label: "test.producer")) {
            for element in 0..<count { try await channel.send(element) }
            channel.finish()
        }
        var received: [Int] = []
        var iterator = channel.makeAsyncIterator()
        while let element = try await iterator.next() {
            received.append(element)
            received += channel.takeAvailable(upTo: 64)
            #expect(channel.statistics.elementsBuffered <= 16)
        }
        try await producer.value
        #expect(received == Array(0..<count))
        #expect(channel.statistics.peakElementsBuffered <= 16)
    }
}
