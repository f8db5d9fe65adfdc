import SluiceTestSupport
import Testing
@testable import Sluice

/// The push buffer's decisions with no tasks: events in hostile orders, the actions asserted.
/// Consumers are plain integers.
@Suite struct PushBufferStateMachineTests {
    typealias Machine = PushBuffer<Int>.StateMachine<Int>
    struct Boom: Error {}

    static func machine(
        capacity: Int = 4, byteBudget: Int? = nil, high: Int? = nil, low: Int? = nil, spills: Bool = false
    ) -> Machine {
        let high = high ?? capacity
        return Machine(
            capacity: capacity, byteBudget: byteBudget, highWatermark: high,
            lowWatermark: low ?? max(1, high / 2), spills: spills)
    }

    /// Takes the next element, expecting one; returns it and whether the resume callback runs.
    static func take(_ machine: inout Machine) -> (Int, Bool)? {
        if case .returnElement(let element, let effect) = machine.next() {
            if case .resume = effect { return (element, true) }
            #expect(effect == .none, "taking an element never stops the source")
            return (element, false)
        }
        return nil
    }

    @Test func fifthYieldPastCapacityIsRejectedOnceAndStopsTheSource() {
        var machine = Self.machine(capacity: 4)
        for value in 1...4 {
            guard case .enqueued = machine.yield(value, weight: 0) else {
                Issue.record("yield \(value) not enqueued"); return
            }
        }
        guard case .reject(stopSource: true) = machine.yield(5, weight: 0) else {
            Issue.record("fifth yield not rejected with a stop"); return
        }
        guard case .reject(stopSource: false) = machine.yield(6, weight: 0) else {
            Issue.record("later yield not rejected"); return
        }
        #expect((1...4).map { _ in Self.take(&machine)?.0 } == [1, 2, 3, 4])
        guard case .throwError(let error) = machine.next() else { Issue.record("no error after drain"); return }
        #expect(error as? CapacityExceededError == CapacityExceededError(capacity: 4, bufferedCount: 4, bufferedBytes: 0))
    }

    @Test func pauseFromTheCrossingUntilBelowLowThenResumeOnce() {
        var machine = Self.machine(capacity: 8, high: 4, low: 2)
        var demands: [PushBuffer<Int>.Demand] = []
        for value in 1...5 {
            if case .enqueued(let demand) = machine.yield(value, weight: 0) { demands.append(demand) }
        }
        #expect(demands == [.keepGoing, .keepGoing, .keepGoing, .pause, .pause])
        // 5 buffered: taking to 4, 3, 2 stays paused; to 1 crosses below 2.
        let resumes = (1...5).map { _ in Self.take(&machine)!.1 }
        #expect(resumes == [false, false, false, true, false])
        guard case .enqueued(.keepGoing) = machine.yield(6, weight: 0) else {
            Issue.record("not resumed"); return
        }
    }

    @Test func heavyElementEntersOnlyAnEmptyBuffer() {
        var machine = Self.machine(capacity: 4, byteBudget: 10)
        guard case .enqueued = machine.yield(1, weight: 50) else { Issue.record("heavy not admitted"); return }
        guard case .reject = machine.yield(2, weight: 1) else { Issue.record("budget ignored"); return }
    }

    @Test func waitingConsumerReceivesTheYieldDirectly() {
        var machine = Self.machine()
        guard case .suspend(let id) = machine.next() else { Issue.record("no suspend"); return }
        guard case .wait = machine.consumerSuspended(id: id, consumer: 7) else { Issue.record("no wait"); return }
        guard case .resumeConsumer(7, 42) = machine.yield(42, weight: 0) else { Issue.record("no handoff"); return }
    }

    @Test func cancelledBeforeRegisteringResumesWithCancellationAndStopsTheSourceOnce() {
        var machine = Self.machine()
        guard case .suspend(let id) = machine.next() else { Issue.record("no suspend"); return }
        guard case .resume(consumer: nil, .stop) = machine.consumerCancelled(id: id) else {
            Issue.record("cancel did not terminate"); return
        }
        guard case .resumeConsumer(9, .failure(let error)) = machine.consumerSuspended(id: id, consumer: 9) else {
            Issue.record("late registration not answered"); return
        }
        #expect(error is CancellationError)
        guard case .none = machine.consumerTerminated() else {
            Issue.record("second termination stopped the source again"); return
        }
        guard case .terminate = machine.yield(1, weight: 0) else { Issue.record("yield after end accepted"); return }
    }

    @Test func finishAfterOverflowKeepsTheOverflowError() {
        var machine = Self.machine(capacity: 1)
        _ = machine.yield(1, weight: 0)
        _ = machine.yield(2, weight: 0)
        guard case .none = machine.finish() else { Issue.record("finish changed an ended stream"); return }
        #expect(Self.take(&machine)?.0 == 1)
        guard case .throwError(let error) = machine.next() else { Issue.record("no error"); return }
        #expect(error is CapacityExceededError)
    }

    @Test func finishWakesTheWaitingConsumerWithTheEnd() {
        var machine = Self.machine()
        guard case .suspend(let id) = machine.next() else { Issue.record("no suspend"); return }
        _ = machine.consumerSuspended(id: id, consumer: 3)
        guard case .resume(consumer: (3, .end)?, .none) = machine.finish() else { Issue.record("not woken"); return }
        guard case .returnNil = machine.next() else { Issue.record("not ended"); return }
    }

    @Test func spillKeepsOrderBehindTheMemoryBuffer() {
        var machine = Self.machine(capacity: 2, spills: true)
        _ = machine.yield(1, weight: 0)
        _ = machine.yield(2, weight: 0)
        guard case .spill(rewind: true) = machine.yield(3, weight: 0) else { Issue.record("no spill"); return }
        guard case .spilled(_, resumingConsumer: nil) = machine.spillWritten(weight: 0) else {
            Issue.record("not spilled"); return
        }
        #expect(Self.take(&machine)?.0 == 1)
        // Room in memory now, but a record waits in the file: the next yield spills too.
        guard case .spill(rewind: false) = machine.yield(4, weight: 0) else { Issue.record("overtook the spill"); return }
        _ = machine.spillWritten(weight: 0)
        #expect(Self.take(&machine)?.0 == 2)
        guard case .refill(let read) = machine.next() else { Issue.record("no read-back"); return }
        #expect(read.maxRecords == 2 && read.position == 0)
        guard case .returnElement(3, _) = machine.spillRead([.init(element: 3, weight: 0), .init(element: 4, weight: 0)], nextPosition: 16) else {
            Issue.record("read-back not delivered"); return
        }
        #expect(Self.take(&machine)?.0 == 4)
        // Drained: the next overflow rewinds the store to its beginning.
        _ = machine.yield(5, weight: 0)
        _ = machine.yield(6, weight: 0)
        guard case .spill(rewind: true) = machine.yield(7, weight: 0) else { Issue.record("no rewind"); return }
    }

    @Test func spillWrittenAfterTheConsumerLeftIsHandedBack() {
        var machine = Self.machine(capacity: 1, spills: true)
        _ = machine.yield(1, weight: 0)
        guard case .spill = machine.yield(2, weight: 0) else { Issue.record("no spill"); return }
        _ = machine.consumerTerminated()
        guard case .terminate = machine.spillWritten(weight: 0) else {
            Issue.record("record kept for a gone consumer"); return
        }
        #expect(machine.statistics.elementsDiscarded == 1)
    }

    @Test func spillLimitOverflowsAfterTheAcceptedRecords() {
        var machine = Self.machine(capacity: 1, spills: true)
        _ = machine.yield(1, weight: 5)
        guard case .spill = machine.yield(2, weight: 5) else { Issue.record("no spill"); return }
        guard case .reject(stopSource: true, resumingConsumer: nil) = machine.spillFailed(nil, spillLimit: 20) else {
            Issue.record("limit not rejected"); return
        }
        #expect(Self.take(&machine)?.0 == 1)
        guard case .throwError(let error) = machine.next() else { Issue.record("no error"); return }
        #expect((error as? CapacityExceededError)?.spillLimit == 20)
    }

    // MARK: Spill failures and read-back

    /// A machine of `capacity` with `memory` elements in memory and `spilled` records in the file
    /// (weights as given, in order), and the consumer idle.
    static func spilling(capacity: Int, byteBudget: Int? = nil, high: Int? = nil, low: Int? = nil, weights: [Int]) -> Machine {
        var machine = Self.machine(capacity: capacity, byteBudget: byteBudget, high: high, low: low, spills: true)
        for (value, weight) in weights.enumerated() {
            switch machine.yield(value + 1, weight: weight) {
            case .enqueued: break
            case .spill: _ = machine.spillWritten(weight: weight)
            default: Issue.record("yield \(value + 1) neither enqueued nor spilled")
            }
        }
        return machine
    }

    @Test func failedSpillWriteRejectsStopsOnceAndFailsAfterTheAcceptedElements() {
        var machine = Self.machine(capacity: 1, spills: true)
        _ = machine.yield(1, weight: 0)
        guard case .spill = machine.yield(2, weight: 0) else { Issue.record("no spill"); return }
        guard case .reject(stopSource: true, resumingConsumer: nil) = machine.spillFailed(Boom(), spillLimit: 1 << 20) else {
            Issue.record("failed write not rejected with a stop"); return
        }
        guard case .reject(stopSource: false) = machine.yield(3, weight: 0) else { Issue.record("later yield not rejected"); return }
        #expect(Self.take(&machine)?.0 == 1)
        guard case .throwError(let error) = machine.next() else { Issue.record("no error"); return }
        #expect(error is Boom)
        #expect(machine.statistics.elementsAccepted == 1)
    }

    /// Capacity 1: element 1 in memory, element 2's spill write reserved (in progress), element
    /// 1 taken, and the consumer waiting as 4 (nothing in memory, nothing written yet).
    static func consumerWaitingOnASpillWrite() -> Machine? {
        var machine = Self.machine(capacity: 1, spills: true)
        _ = machine.yield(1, weight: 0)
        guard case .spill = machine.yield(2, weight: 0), Self.take(&machine)?.0 == 1,
              case .suspend(let id) = machine.next(),
              case .wait = machine.consumerSuspended(id: id, consumer: 4) else { return nil }
        return machine
    }

    @Test func failedSpillWriteWakesTheWaitingConsumerToSeeTheError() throws {
        var machine = try #require(Self.consumerWaitingOnASpillWrite())
        guard case .reject(stopSource: true, resumingConsumer: 4) = machine.spillFailed(Boom(), spillLimit: 1 << 20) else {
            Issue.record("waiting consumer not woken"); return
        }
        guard case .throwError(let error) = machine.next() else { Issue.record("no error"); return }
        #expect(error is Boom)
    }

    @Test func spillWrittenWakesTheWaitingConsumerWithRetry() throws {
        var machine = try #require(Self.consumerWaitingOnASpillWrite())
        guard case .spilled(_, resumingConsumer: 4) = machine.spillWritten(weight: 0) else {
            Issue.record("waiting consumer not woken"); return
        }
        guard case .refill(let read) = machine.next() else { Issue.record("no read-back"); return }
        #expect(read.position == 0 && read.maxRecords == 1)
    }

    @Test func failedReadBackFailsTheStreamStopsTheSourceAndDiscardsTheBacklog() {
        var machine = Self.spilling(capacity: 1, weights: [0, 0, 0])
        #expect(Self.take(&machine)?.0 == 1)
        guard case .refill = machine.next() else { Issue.record("no read-back"); return }
        let stopsSource = machine.spillReadFailed(Boom())
        #expect(stopsSource)
        #expect(machine.statistics.elementsDiscarded == 2 && machine.statistics.elementsInSpill == 0)
        guard case .throwError(let error) = machine.next() else { Issue.record("no error"); return }
        #expect(error is Boom)
        guard case .terminate = machine.yield(9, weight: 0) else { Issue.record("yield after the failure accepted"); return }
    }

    @Test func failedReadBackAfterFinishFailsWithoutStoppingTheSource() {
        var machine = Self.spilling(capacity: 1, weights: [0, 0])
        _ = machine.finish()
        #expect(Self.take(&machine)?.0 == 1)
        guard case .refill = machine.next() else { Issue.record("no read-back"); return }
        let stopsSource = machine.spillReadFailed(Boom())
        #expect(!stopsSource, "a source that finished is not stopped")
        guard case .throwError(let error) = machine.next() else { Issue.record("no error"); return }
        #expect(error is Boom)
    }

    /// C35 in the machine: the read-back request carries the byte budget, and what comes back
    /// is counted in the peaks.
    @Test func readBackRequestCarriesTheBudgetAndItsRecordsCountInThePeaks() {
        var machine = Self.spilling(capacity: 4, byteBudget: 100, weights: [90, 20, 40, 40])
        #expect(machine.statistics.elementsInSpill == 3)
        #expect(Self.take(&machine)?.0 == 1)
        guard case .refill(let read) = machine.next() else { Issue.record("no read-back"); return }
        #expect(read.byteBudget == 100 && read.maxRecords == 3)
        let records: [Machine.Item] = [.init(element: 2, weight: 20), .init(element: 3, weight: 40), .init(element: 4, weight: 40)]
        guard case .returnElement(2, _) = machine.spillRead(records, nextPosition: 3 * 24) else {
            Issue.record("read-back not delivered"); return
        }
        let statistics = machine.statistics
        #expect(statistics.peakElementsBuffered == 3 && statistics.peakBytesBuffered == 100)
        #expect(statistics.elementsBuffered == 2 && statistics.elementsInSpill == 0)
    }

    @Test func partialReadBackLeavesTheRestForTheNextRead() {
        var machine = Self.spilling(capacity: 16, byteBudget: 100, weights: [60, 60, 60, 60])
        #expect(Self.take(&machine)?.0 == 1)
        guard case .refill(let first) = machine.next() else { Issue.record("no read-back"); return }
        #expect(first.position == 0 && first.maxRecords == 3)
        guard case .returnElement(2, _) = machine.spillRead([.init(element: 2, weight: 60)], nextPosition: 76) else {
            Issue.record("read-back not delivered"); return
        }
        #expect(machine.statistics.elementsBuffered == 0 && machine.statistics.peakBytesBuffered == 60)
        guard case .refill(let second) = machine.next() else { Issue.record("no second read-back"); return }
        #expect(second.position == 76 && second.maxRecords == 2)
    }

    @Test func consumerLeavingDuringAReadBackThrowsCancellation() {
        var machine = Self.spilling(capacity: 1, weights: [0, 0])
        #expect(Self.take(&machine)?.0 == 1)
        guard case .refill = machine.next() else { Issue.record("no read-back"); return }
        guard case .resume(consumer: nil, .stop) = machine.consumerTerminated() else {
            Issue.record("departure did not stop the source"); return
        }
        guard case .throwCancellation = machine.spillRead([.init(element: 2, weight: 0)], nextPosition: 16) else {
            Issue.record("records delivered to a gone consumer"); return
        }
        #expect(machine.statistics.elementsDiscarded == 1)
    }

    // MARK: Demand

    /// C36 in the machine: a spilled yield carries the demand, so the pause and the resume agree.
    @Test func spilledYieldPastTheHighWatermarkAnswersPause() {
        var machine = Self.machine(capacity: 2, high: 3, low: 1, spills: true)
        var answers: [String] = []
        for value in 1...5 {
            switch machine.yield(value, weight: 0) {
            case .enqueued(let demand): answers.append("enqueued \(demand)")
            case .spill:
                guard case .spilled(let demand, _) = machine.spillWritten(weight: 0) else {
                    Issue.record("not spilled"); return
                }
                answers.append("spilled \(demand)")
            default: Issue.record("yield \(value) refused")
            }
        }
        #expect(answers == ["enqueued keepGoing", "enqueued keepGoing", "spilled pause", "spilled pause", "spilled pause"])
    }

    @Test func resumeOvertakenByANewerPauseIsNotCurrent() {
        var machine = Self.machine(capacity: 8, high: 2, low: 1)
        _ = machine.yield(1, weight: 0)
        _ = machine.yield(2, weight: 0)  // pause
        _ = Self.take(&machine)
        guard case .returnElement(2, .resume(let resume)) = machine.next() else { Issue.record("no resume"); return }
        #expect(machine.isResumeCurrent(resume))
        _ = machine.yield(3, weight: 0)
        guard case .enqueued(.pause) = machine.yield(4, weight: 0) else { Issue.record("no new pause"); return }
        #expect(!machine.isResumeCurrent(resume), "a resume overtaken by a newer pause must not be delivered")
    }

    @Test func resumeIsNotDecidedAfterTheStreamEnded() {
        var machine = Self.machine(capacity: 8, high: 2, low: 1)
        _ = machine.yield(1, weight: 0)
        _ = machine.yield(2, weight: 0)  // pause
        _ = machine.finish()
        #expect(Self.take(&machine)?.1 == false)
        #expect(Self.take(&machine)?.1 == false, "nobody is left to resume")
    }

    // MARK: Consumer

    @Test func elementHandedToAWaitingConsumerCountsInThePeaks() {
        var machine = Self.machine()
        guard case .suspend(let id) = machine.next() else { Issue.record("no suspend"); return }
        _ = machine.consumerSuspended(id: id, consumer: 7)
        guard case .resumeConsumer(7, 42) = machine.yield(42, weight: 5) else { Issue.record("no handoff"); return }
        let statistics = machine.statistics
        #expect(statistics.elementsBuffered == 0)
        #expect(statistics.peakElementsBuffered == 1 && statistics.peakBytesBuffered == 5)
    }

    @Test func elementArrivingBeforeTheConsumerRegistersWakesItWithRetry() {
        var machine = Self.machine()
        guard case .suspend(let id) = machine.next() else { Issue.record("no suspend"); return }
        guard case .enqueued(.keepGoing) = machine.yield(1, weight: 0) else { Issue.record("not enqueued"); return }
        guard case .resumeConsumer(3, .retry) = machine.consumerSuspended(id: id, consumer: 3) else {
            Issue.record("late registration not retried"); return
        }
        #expect(Self.take(&machine)?.0 == 1)
    }

    @Test func failWakesTheWaitingConsumerWithTheError() {
        var machine = Self.machine()
        guard case .suspend(let id) = machine.next() else { Issue.record("no suspend"); return }
        _ = machine.consumerSuspended(id: id, consumer: 3)
        guard case .resume(consumer: (3, .failure(let error))?, .none) = machine.fail(Boom()) else { Issue.record("not woken"); return }
        #expect(error is Boom)
        guard case .none = machine.finish() else { Issue.record("finish after fail changed the end"); return }
        guard case .throwError(let sticky) = machine.next() else { Issue.record("not failed"); return }
        #expect(sticky is Boom)
    }

    @Test func secondIteratorIsRefused() {
        var machine = Self.machine()
        let first = machine.makeIterator()
        let second = machine.makeIterator()
        #expect(first == .makeIterator && second == .failSecondIterator)
    }
}

