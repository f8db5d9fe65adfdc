import SluiceTestSupport
import Testing

@testable import Sluice

/// The byte budget shared by many files: its decisions in hostile orders (the state machine,
/// with numbers standing for waiters), then the public type with real tasks, ordered by events.
@Suite struct ByteBudgetTests {
    typealias Machine = ByteBudget.StateMachine<Int>

    @Test func grantsAtOnceWhileTheBytesFit() {
        var machine = Machine(limit: 100)
        let r1 = machine.tryAcquire(bytes: 60)
        #expect(r1)
        let r2 = machine.tryAcquire(bytes: 40)
        #expect(r2)
        let r3 = machine.tryAcquire(bytes: 1)
        #expect(!r3)
        #expect(machine.held == 100)
    }

    @Test func releasesResumeWaitersInArrivalOrderWithoutOvertaking() {
        var machine = Machine(limit: 100)
        let r4 = machine.tryAcquire(bytes: 100)
        #expect(r4)
        let first = machine.makeID(), second = machine.makeID()
        let r5 = machine.acquire(id: first, bytes: 70, continuation: 1)
        #expect(r5 == .wait)
        let r6 = machine.acquire(id: second, bytes: 10, continuation: 2)
        #expect(r6 == .wait)
        // 30 free: the 10-byte request behind the 70-byte one does not overtake it.
        let r7 = machine.release(bytes: 30)
        #expect(r7 == [])
        let r8 = machine.tryAcquire(bytes: 1)
        #expect(!r8)
        let r9 = machine.release(bytes: 40)
        #expect(r9 == [1])
        #expect(machine.held == 100)
        let r10 = machine.release(bytes: 10)
        #expect(r10 == [2])
        #expect(machine.held == 100)
    }

    @Test func aRequestLargerThanTheBudgetIsGrantedAloneWhenNothingIsHeld() {
        var machine = Machine(limit: 100)
        let r11 = machine.tryAcquire(bytes: 10)
        #expect(r11)
        let big = machine.makeID()
        let r12 = machine.acquire(id: big, bytes: 500, continuation: 1)
        #expect(r12 == .wait)
        let r13 = machine.release(bytes: 10)
        #expect(r13 == [1])
        #expect(machine.held == 500)
        #expect(machine.peakHeld == 500)
        let r14 = machine.tryAcquire(bytes: 1)
        #expect(!r14)
        let r15 = machine.release(bytes: 500)
        #expect(r15 == [])
        #expect(machine.held == 0)
    }

    @Test func aCancellationBeforeRegisteringNeverWaitsAndHoldsNothing() {
        var machine = Machine(limit: 100)
        let r16 = machine.tryAcquire(bytes: 100)
        #expect(r16)
        let id = machine.makeID()
        let (cancelled, granted) = machine.cancel(id: id)
        #expect(cancelled == nil && granted.isEmpty)
        let r17 = machine.acquire(id: id, bytes: 10, continuation: 1)
        #expect(r17 == .cancelled)
        #expect(machine.waiters.isEmpty)
        let r18 = machine.release(bytes: 100)
        #expect(r18 == [])
        #expect(machine.held == 0)
    }

    @Test func aReleaseBeforeTheWaiterRegistersGrantsItAtRegistration() {
        var machine = Machine(limit: 100)
        let r19 = machine.tryAcquire(bytes: 100)
        #expect(r19)
        // The acquire found no room, took its id, and is about to register when room is made.
        let r20 = machine.tryAcquire(bytes: 50)
        #expect(!r20)
        let id = machine.makeID()
        let r21 = machine.release(bytes: 100)
        #expect(r21 == [])
        let r22 = machine.acquire(id: id, bytes: 50, continuation: 1)
        #expect(r22 == .granted)
        #expect(machine.held == 50)
    }

    @Test func aCancelledHeadLetsTheWaitersBehindItThrough() {
        var machine = Machine(limit: 100)
        let r23 = machine.tryAcquire(bytes: 60)
        #expect(r23)
        let head = machine.makeID(), behind = machine.makeID()
        let r24 = machine.acquire(id: head, bytes: 80, continuation: 1)
        #expect(r24 == .wait)
        let r25 = machine.acquire(id: behind, bytes: 30, continuation: 2)
        #expect(r25 == .wait)
        let (cancelled, granted) = machine.cancel(id: head)
        #expect(cancelled == 1)
        #expect(granted == [2])
        #expect(machine.held == 90)
    }

    @Test func aCancelledWaiterThrowsAndHoldsNothing() async {
        let budget = ByteBudget(limit: 10)
        try? await budget.acquire(10)
        let waiter = Task { () -> Bool in
            do { try await budget.acquire(5); return true } catch { return false }
        }
        while budget.waiting == 0 { await Task.yield() }
        waiter.cancel()
        #expect(await waiter.value == false)
        #expect(budget.waiting == 0)
        budget.release(10)
        #expect(budget.held == 0)
    }

    @Test func anAcquireInACancelledTaskThrowsAtOnce() async {
        let budget = ByteBudget(limit: 10)
        let task = Task { () -> Bool in
            withUnsafeCurrentTask { $0?.cancel() }
            do { try await budget.acquire(1); return true } catch { return false }
        }
        #expect(await task.value == false)
        #expect(budget.held == 0)
    }

    @Test func aWaiterResumesWhenRoomIsReleased() async throws {
        let budget = ByteBudget(limit: 10)
        try await budget.acquire(8)
        let waiter = Task { try await budget.acquire(5) }
        while budget.waiting == 0 { await Task.yield() }
        budget.release(8)
        try await waiter.value
        #expect(budget.held == 5)
        #expect(budget.peakHeld == 8)
    }
}
