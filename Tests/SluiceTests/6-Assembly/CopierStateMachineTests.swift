import Testing
@testable import Sluice

/// ``Copier/StateMachine`` driven by events alone, with integers for jobs and waiting slots and
/// time given with each event: every order the engine's threads can bring, fixed.
@Suite struct CopierStateMachineTests {
    typealias Machine = Copier.StateMachine<Int, Int>

    static func machine(durableWidth: Int = 1, patience: Duration = .seconds(10)) -> Machine {
        Machine(durableWidth: durableWidth, patience: patience)
    }

    /// Submits a job and starts it on a slot, as the engine does when there is room: taken and
    /// admitted at once.
    static func startJob(in machine: inout Machine, durable: Bool) throws {
        let index = try machine.submit { $0 }
        let taking = machine.take(index)
        let admitted = machine.admit(durable: durable)
        #expect(taking == .taken && admitted)
        machine.start()
    }

    @Test func jobsAreNumberedInOrderAndRefusedOnceCancelled() throws {
        var machine = Self.machine()
        #expect(try machine.submit { $0 * 10 } == 0)
        #expect(try machine.submit { $0 * 10 } == 10)
        // A submission the intake refused is withdrawn, unless a slot took it first.
        let taking = machine.take(1)
        #expect(taking == .taken)
        let withdrawn = machine.withdraw(1)
        #expect(!withdrawn)
        let withdrawn2 = machine.withdraw(0)
        #expect(withdrawn2)
        _ = machine.cancel()
        #expect(throws: CancellationError.self) { try machine.submit { $0 } }
    }

    @Test func aJobTakenAfterTheCancellationIsNeverStarted() throws {
        var machine = Self.machine()
        _ = try machine.submit { $0 }
        _ = try machine.submit { $0 }
        _ = machine.cancel()
        let taking = machine.take(0)
        #expect(taking == .cancelled)
        let taking2 = machine.take(0)
        #expect(taking2 == .gone)  // failed already
        // The job never taken fails when the slots have ended, in the order submitted.
        let leftovers = machine.takeLeftovers()
        #expect(leftovers == [1])
        #expect(machine.noFileHoldsDescriptors)
    }

    @Test func aDurableFileWaitsForRoomAndTheEndOfAFileResumesIt() throws {
        var machine = Self.machine(durableWidth: 1)
        for _ in 0..<3 { _ = try machine.submit { $0 } }
        let taking = machine.take(0)
        let admitted = machine.admit(durable: true)
        #expect(taking == .taken && admitted)
        machine.start()
        let taking2 = machine.take(1)
        #expect(taking2 == .taken)
        let admitted2 = machine.admit(durable: true)
        #expect(!admitted2)
        // A file that is not durable always fits (one per slot).
        let taking3 = machine.take(2)
        let admitted3 = machine.admit(durable: false)
        #expect(taking3 == .taken && admitted3)
        let waits = machine.wait(7, durable: true)
        #expect(waits)
        let ending = machine.end(sealed: false)
        #expect(ending.waiter == 7 && !ending.commitsBatch)
        // Resumed, it tries again; a slot that finds room already never waits.
        let admitted4 = machine.admit(durable: true)
        #expect(admitted4 == false)  // the other file is still in flight
        let resumed = machine.drop(admitted: true)
        #expect(resumed == nil)  // the non-durable file's budget was refused
        let waits2 = machine.wait(8, durable: true)
        #expect(!waits2)
        let admitted5 = machine.admit(durable: true)
        #expect(admitted5)
    }

    @Test func aFileSealedWhileAnotherWaitsForDescriptorsCommitsTheBatchNow() throws {
        var machine = Self.machine(durableWidth: 2)
        for _ in 0..<2 { try Self.startJob(in: &machine, durable: true) }
        let commitsBatch = machine.end(sealed: true).commitsBatch
        #expect(!commitsBatch)  // no one waits
        try Self.startJob(in: &machine, durable: true)
        let ticket = machine.beginDescriptorWait(isFile: true, moved: 0, now: .now)
        let commitsBatch2 = machine.end(sealed: true).commitsBatch
        #expect(commitsBatch2)
        // That end released descriptors: the waiting file tries again.
        #expect(machine.descriptorWaitOutcome(ticket, batchPending: 1) == true)
        machine.endDescriptorWait(ticket)
        let commitsBatch3 = machine.end(sealed: true).commitsBatch
        #expect(!commitsBatch3)
    }

    @Test func aWaitForDescriptorsEndsAsTheEngineDecides() throws {
        var machine = Self.machine(durableWidth: 2)
        for _ in 0..<2 { try Self.startJob(in: &machine, durable: false) }
        let first = machine.beginDescriptorWait(isFile: true, moved: 0, now: .now)
        #expect(machine.descriptorWaitOutcome(first, batchPending: 0) == nil)  // the other file runs
        let second = machine.beginDescriptorWait(isFile: true, moved: 0, now: .now)
        // Every file waits: none will release anything, unless a batch is pending.
        #expect(machine.descriptorWaitOutcome(first, batchPending: 0) == false)
        #expect(machine.descriptorWaitOutcome(second, batchPending: 1) == nil)
        machine.batchReleased()
        #expect(machine.descriptorWaitOutcome(second, batchPending: 0) == true)
        machine.endDescriptorWait(first)
        machine.endDescriptorWait(second)
        // A tree's walk waits beside a running file; a cancellation ends it.
        let walk = machine.beginDescriptorWait(isFile: false, moved: 0, now: .now)
        #expect(machine.descriptorWaitOutcome(walk, batchPending: 0) == nil)
        _ = machine.cancel()
        #expect(machine.descriptorWaitOutcome(walk, batchPending: 0) == false)
    }

    @Test func thePatienceLastsWhileBytesMoveOrABatchIsPending() throws {
        var machine = Self.machine(durableWidth: 2, patience: .seconds(10))
        for _ in 0..<2 { try Self.startJob(in: &machine, durable: false) }
        let start = ContinuousClock.now
        let ticket = machine.beginDescriptorWait(isFile: true, moved: 100, now: start)
        #expect(machine.patienceLeft(ticket, now: start + .seconds(4)) == .seconds(6))
        // Bytes moved: the patience starts again from then.
        let outcome = machine.patienceElapsed(ticket, moved: 200, batchPending: 0, now: start + .seconds(10))
        #expect(outcome == nil)
        #expect(machine.patienceLeft(ticket, now: start + .seconds(10)) == .seconds(10))
        // A batch pending counts as moving.
        let outcome2 = machine.patienceElapsed(ticket, moved: 200, batchPending: 3, now: start + .seconds(20))
        #expect(outcome2 == nil)
        // Nothing moved for the whole patience: the open fails.
        let outcome3 = machine.patienceElapsed(ticket, moved: 200, batchPending: 0, now: start + .seconds(29))
        #expect(outcome3 == nil)
        let outcome4 = machine.patienceElapsed(ticket, moved: 200, batchPending: 0, now: start + .seconds(30))
        #expect(outcome4 == false)
        machine.endDescriptorWait(ticket)
        #expect(machine.filesWaitingForDescriptors == 0)
    }

    @Test func noFileHoldsDescriptorsOnceEveryJobHasLeftItsThread() throws {
        var machine = Self.machine()
        #expect(machine.noFileHoldsDescriptors)
        _ = try machine.submit { $0 }
        #expect(!machine.noFileHoldsDescriptors)  // waiting
        let taking = machine.take(0)
        #expect(taking == .taken)
        #expect(!machine.noFileHoldsDescriptors)  // being started
        let admitted = machine.admit(durable: true)
        #expect(admitted)
        machine.start()
        #expect(!machine.noFileHoldsDescriptors)  // on its thread
        _ = machine.end(sealed: true)
        #expect(machine.noFileHoldsDescriptors)  // its descriptors are its batch's
    }
}
