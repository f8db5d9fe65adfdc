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
        if case .returnElement(let element, let runResume) = machine.next() { return (element, runResume) }
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
        guard case .terminate(consumer: nil, stopSource: true) = machine.consumerCancelled(id: id) else {
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
        guard case .resumeConsumer(3, .end) = machine.finish() else { Issue.record("not woken"); return }
        guard case .returnNil = machine.next() else { Issue.record("not ended"); return }
    }

    @Test func spillKeepsOrderBehindTheMemoryBuffer() {
        var machine = Self.machine(capacity: 2, spills: true)
        let descriptor = FileDescriptor(rawValue: 99)
        _ = machine.yield(1, weight: 0)
        _ = machine.yield(2, weight: 0)
        guard case .spill(rewind: true) = machine.yield(3, weight: 0) else { Issue.record("no spill"); return }
        guard case .spilled(resumingConsumer: nil) = machine.spillWritten(weight: 0, descriptor: descriptor) else {
            Issue.record("not spilled"); return
        }
        #expect(Self.take(&machine)?.0 == 1)
        // Room in memory now, but a record waits in the file: the next yield spills too.
        guard case .spill(rewind: false) = machine.yield(4, weight: 0) else { Issue.record("overtook the spill"); return }
        _ = machine.spillWritten(weight: 0, descriptor: descriptor)
        #expect(Self.take(&machine)?.0 == 2)
        guard case .readSpill(let read) = machine.next() else { Issue.record("no read-back"); return }
        #expect(read.maxRecords == 2 && read.offset == 0)
        guard case .returnElement(3, _) = machine.spillRead([.init(element: 3, weight: 0), .init(element: 4, weight: 0)], endOffset: 16) else {
            Issue.record("read-back not delivered"); return
        }
        #expect(Self.take(&machine)?.0 == 4)
        // Drained: the next overflow rewinds the file to offset 0.
        _ = machine.yield(5, weight: 0)
        _ = machine.yield(6, weight: 0)
        guard case .spill(rewind: true) = machine.yield(7, weight: 0) else { Issue.record("no rewind"); return }
    }

    @Test func spillWrittenAfterTheConsumerLeftIsHandedBack() {
        var machine = Self.machine(capacity: 1, spills: true)
        _ = machine.yield(1, weight: 0)
        guard case .spill = machine.yield(2, weight: 0) else { Issue.record("no spill"); return }
        _ = machine.consumerTerminated()
        guard case .terminate = machine.spillWritten(weight: 0, descriptor: FileDescriptor(rawValue: 99)) else {
            Issue.record("record kept for a gone consumer"); return
        }
        #expect(machine.statistics.discardedCount == 1)
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
}
