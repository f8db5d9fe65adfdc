import SluiceTestSupport
import Testing
@testable import Sluice

/// The stage's decisions with plain integers for the submitter's, the consumer's and the
/// closers' handles: every event and its answer, no threads.
@Suite struct OrderedParallelStageStateMachineTests {
    typealias Machine = OrderedParallelStage<Int, String>.StateMachine<Int, Int, Int>

    private struct Failure: Error, Equatable {}

    /// Submits `input` and returns the worker and sequence it starts on, if it starts.
    private func start(_ machine: inout Machine, _ input: Int) -> (worker: Int, sequence: Int)? {
        guard case .start(let worker, let job) = machine.submit(input) else { return nil }
        #expect(job.input == input)
        return (worker, job.sequence)
    }

    private func delivered(_ action: Machine.NextAction) -> String? {
        if case .deliver(let output, _) = action { output } else { nil }
    }

    @Test func aResultWaitsForTheBlocksBeforeIt() throws {
        var machine = Machine(workerCount: 2, maximumInFlight: 4)
        let first = try #require(start(&machine, 10))
        let second = try #require(start(&machine, 11))
        #expect(first.sequence == 0 && second.sequence == 1 && first.worker != second.worker)
        guard case .queued = machine.submit(12) else { Issue.record("a third block starts with both workers busy"); return }

        // The second block finishes first: its worker takes the queued one; its result waits.
        let action = machine.workerFinished(second.worker, sequence: 1, result: .success("b"))
        #expect(action.nextJob?.sequence == 2 && action.consumer == nil)
        guard case .notReady = machine.next() else { Issue.record("block 0 is not finished"); return }
        guard case .wait = machine.consumerWaits(7) else { Issue.record("the consumer must wait"); return }

        // The first block's result goes straight to the waiting consumer.
        let firstDone = machine.workerFinished(first.worker, sequence: 0, result: .success("a"))
        #expect(firstDone.nextJob == nil)
        #expect(firstDone.consumer?.consumer == 7)
        #expect(try firstDone.consumer?.result.get() == "a")
        #expect(delivered(machine.next()) == "b")
        _ = machine.workerFinished(second.worker, sequence: 2, result: .success("c"))
        let finished = machine.finish()
        #expect(finished == nil)
        #expect(delivered(machine.next()) == "c")
        guard case .end = machine.next() else { Issue.record("every result was handed out"); return }
        let closer = machine.closerWaits(1)
        #expect(closer == 1, "no worker is busy")
    }

    @Test func aFullStageMakesTheSubmitterWaitUntilTheOldestIsTaken() throws {
        var machine = Machine(workerCount: 1, maximumInFlight: 2)
        let first = try #require(start(&machine, 1))
        guard case .queued = machine.submit(2) else { Issue.record("the second block waits for the worker"); return }
        guard case .wait = machine.submit(3) else { Issue.record("two blocks are in flight"); return }
        #expect(machine.isFull)
        let waiting = machine.submitterWaits(5)
        #expect(waiting == nil)

        // A finished block still counts until it is taken.
        let done = machine.workerFinished(first.worker, sequence: 0, result: .success("a"))
        #expect(done.submitter == nil && done.nextJob?.sequence == 1)
        guard case .deliver("a", let submitter) = machine.next() else { Issue.record("block 0 is finished"); return }
        #expect(submitter == 5)
        #expect(machine.peakInFlight == 2)
    }

    @Test func theFirstErrorStopsEverythingAndStandsAfterACancel() throws {
        var machine = Machine(workerCount: 2, maximumInFlight: 4)
        let first = try #require(start(&machine, 1))
        let second = try #require(start(&machine, 2))
        guard case .queued = machine.submit(3) else { Issue.record(); return }
        guard case .wait = machine.consumerWaits(9) else { Issue.record(); return }

        let failed = machine.workerFinished(second.worker, sequence: 1, result: .failure(Failure()))
        #expect(failed.nextJob == nil, "the queued block is dropped")
        #expect(failed.consumer?.consumer == 9)
        #expect(throws: Failure.self) { try failed.consumer?.result.get() }

        let cancelled = machine.cancel()
        #expect(cancelled.consumer == nil && cancelled.submitter == nil)
        guard case .fail(let error) = machine.submit(4) else { Issue.record(); return }
        #expect(error is Failure)
        guard case .fail(let again) = machine.next() else { Issue.record(); return }
        #expect(again is Failure)

        let closer = machine.closerWaits(3)
        #expect(closer == nil, "the first block still runs")
        let last = machine.workerFinished(first.worker, sequence: 0, result: .success("late"))
        #expect(last.consumer == nil && last.nextJob == nil)
        #expect(last.closers == [3])
    }

    @Test func cancellingDropsQueuedBlocksAndResumesTheWaiters() throws {
        var machine = Machine(workerCount: 1, maximumInFlight: 2)
        let first = try #require(start(&machine, 1))
        guard case .queued = machine.submit(2) else { Issue.record(); return }
        guard case .wait = machine.submit(3) else { Issue.record(); return }
        let waiting = machine.submitterWaits(4)
        #expect(waiting == nil)
        guard case .wait = machine.consumerWaits(5) else { Issue.record(); return }

        let stop = machine.cancel()
        #expect(stop.submitter == 4)
        #expect(stop.consumer?.consumer == 5)
        #expect(throws: CancellationError.self) { try stop.consumer?.result.get() }
        guard case .fail(let error) = machine.submit(3) else { Issue.record(); return }
        #expect(error is CancellationError)

        let done = machine.workerFinished(first.worker, sequence: 0, result: .success("dropped"))
        #expect(done.nextJob == nil)
        #expect(machine.busyWorkers == 0)
    }

    @Test func finishingResumesAConsumerWaitingWithNothingInFlight() throws {
        var machine = Machine(workerCount: 1, maximumInFlight: 1)
        guard case .wait = machine.consumerWaits(1) else { Issue.record(); return }
        let finished = machine.finish()
        let resumed = try #require(finished)
        #expect(resumed.consumer == 1)
        #expect(try resumed.result.get() == nil)
        let again = machine.finish()
        #expect(again == nil, "a second finish does nothing")
        let stop = machine.cancel()
        #expect(stop.consumer == nil, "cancelling after the end changes nothing")
        guard case .end = machine.next() else { Issue.record(); return }
    }
}
