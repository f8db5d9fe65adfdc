import SluiceTestSupport
import Testing
@testable import Sluice

/// The channel's decisions, event by event, with no tasks: handles are plain integers and
/// events arrive in the hostile orders real tasks can produce.
@Suite struct BoundedChannelStateMachineTests {
    typealias Machine = BoundedChannel<Int>.StateMachine<Int, Int>
    typealias Reason = BoundedChannel<Int>.SendError.Reason

    /// A sender resumption, reduced to something `Equatable`.
    struct Outcome: Equatable, CustomStringConvertible {
        var sender: Int
        var failure: BoundedChannel<Int>.SendError?

        static func sent(_ sender: Int) -> Outcome { Outcome(sender: sender, failure: nil) }
        static func failed(_ sender: Int, _ reason: Reason, _ element: Int) -> Outcome {
            Outcome(sender: sender, failure: BoundedChannel<Int>.SendError(reason: reason, element: element))
        }

        var description: String {
            failure.map { "\(sender): \($0.reason) \($0.element)" } ?? "\(sender): sent"
        }
    }

    static func outcomes(_ resumptions: [Machine.SenderResumption]) -> [Outcome] {
        resumptions.map { resumption in
            switch resumption.result {
            case .success: .sent(resumption.sender)
            case .failure(let failure): Outcome(sender: resumption.sender, failure: failure)
            }
        }
    }

    static func outcome(_ action: Machine.SenderSuspendedAction) -> Outcome? {
        guard case .resumeSender(let sender, let result) = action else { return nil }
        return outcomes([(sender, result)]).first
    }

    static func isComplete(_ action: Machine.SendAction) -> Bool {
        if case .complete = action { true } else { false }
    }

    static func suspendedID(_ action: Machine.SendAction, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        guard case .suspend(let id, wakingConsumer: nil) = action else {
            Issue.record("expected .suspend, got \(action)", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        return id
    }

    static func thrownReason(_ action: Machine.SendAction) -> Reason? {
        if case .throwError(let reason) = action { reason } else { nil }
    }

    /// The element returned and the senders resumed with it (all admitted, as `.sent`).
    static func returned(_ action: Machine.NextAction) -> (element: Int, senders: [Outcome])? {
        if case .returnElement(let element, let resumptions) = action { (element, outcomes(resumptions)) } else { nil }
    }

    static func consumerSuspendID(_ action: Machine.NextAction, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        guard case .suspend(let id) = action else {
            Issue.record("expected .suspend, got \(action)", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        return id
    }

    /// What an end of the channel releases: the consumer woken (and with what), the senders.
    static func released(_ action: Machine.EndAction) -> (consumer: Int?, wake: ConsumerWake<Int>?, senders: [Outcome])? {
        guard case .resume(let consumer, let senders) = action else { return nil }
        return (consumer?.0, consumer?.1, outcomes(senders))
    }

    /// Whether the consumer is woken with `CancellationError` (its end).
    static func isCancellation(_ wake: ConsumerWake<Int>?) -> Bool {
        if case .failure(let error) = wake { error is CancellationError } else { false }
    }

    struct Boom: Error, Equatable {}

    // MARK: Sending

    @Test func sendEnqueuesWhileThereIsRoomThenSuspends() throws {
        var machine = Machine(capacity: 2, byteBudget: nil)
        #expect(Self.isComplete(machine.send(1, weight: 0)))
        #expect(Self.isComplete(machine.send(2, weight: 0)))
        let id = try Self.suspendedID(machine.send(3, weight: 0))
        guard case .wait(let waiting) = machine.senderSuspended(id: id, sender: 30) else {
            Issue.record("a sender with no room must wait"); return
        }
        #expect(waiting == 1)
        let first = Self.returned(machine.next())
        #expect(first?.element == 1)
        #expect(first?.senders == [.sent(30)])
        #expect(Self.returned(machine.next())?.element == 2)
        #expect(Self.returned(machine.next())?.element == 3)
        #expect(machine.statistics.peakElementsBuffered == 2)
        #expect(machine.statistics.elementsDelivered == 3)
    }

    @Test func sendHandsTheElementToAWaitingConsumer() throws {
        var machine = Machine(capacity: 1, byteBudget: nil)
        let id = try Self.consumerSuspendID(machine.next())
        guard case .wait = machine.consumerSuspended(id: id, consumer: 5) else {
            Issue.record("an empty open channel must park its consumer"); return
        }
        guard case .resumeConsumer(let consumer, let element) = machine.send(9, weight: 3) else {
            Issue.record("a send must go straight to the waiting consumer"); return
        }
        #expect(consumer == 5 && element == 9)
        let statistics = machine.statistics
        #expect(statistics.elementsAccepted == 1 && statistics.elementsDelivered == 1)
        #expect(statistics.bytesAccepted == 3 && statistics.bytesDelivered == 3)
        // Handed over directly, it still passed through the channel: the peaks count it.
        #expect(statistics.elementsBuffered == 0 && statistics.peakElementsBuffered == 1)
        #expect(statistics.peakBytesBuffered == 3)
    }

    @Test func laterSmallerSenderNeverOvertakesAWaitingOne() throws {
        var machine = Machine(capacity: 4, byteBudget: 10)
        #expect(Self.isComplete(machine.send(4, weight: 4)))
        #expect(Self.isComplete(machine.send(4, weight: 4)))
        let big = try Self.suspendedID(machine.send(5, weight: 5))
        // 8 + 1 fits the budget, but a sender is already waiting.
        let small = try Self.suspendedID(machine.send(1, weight: 1))
        _ = machine.senderSuspended(id: small, sender: 11)
        _ = machine.senderSuspended(id: big, sender: 10)
        let first = Self.returned(machine.next())
        #expect(first?.element == 4)
        #expect(first?.senders == [.sent(10), .sent(11)])  // 4 + 5 + 1 = 10: both fit, in arrival order
        #expect(Self.returned(machine.next())?.element == 4)
        #expect(Self.returned(machine.next())?.element == 5)
        #expect(Self.returned(machine.next())?.element == 1)
    }

    @Test func oversizedElementEntersOnlyAnEmptyBuffer() throws {
        var machine = Machine(capacity: 4, byteBudget: 10)
        #expect(Self.isComplete(machine.send(100, weight: 100)))  // empty buffer: admitted
        let small = try Self.suspendedID(machine.send(1, weight: 1))
        _ = machine.senderSuspended(id: small, sender: 1)
        #expect(Self.returned(machine.next())?.senders == [.sent(1)])

        let oversized = try Self.suspendedID(machine.send(200, weight: 200))  // non-empty buffer: waits
        _ = machine.senderSuspended(id: oversized, sender: 2)
        let taken = Self.returned(machine.next())
        #expect(taken?.element == 1)
        #expect(taken?.senders == [.sent(2)])  // admitted once the buffer is empty
        #expect(machine.statistics.peakBytesBuffered == 200)
    }

    // MARK: Sender cancellation

    @Test func senderCancelledBeforeRegisteringGetsItsElementAtRegistration() throws {
        var machine = Machine(capacity: 1, byteBudget: nil)
        #expect(Self.isComplete(machine.send(1, weight: 0)))
        let id = try Self.suspendedID(machine.send(2, weight: 0))
        guard case .none = machine.senderCancelled(id: id) else {
            Issue.record("an unregistered sender has nothing to resume yet"); return
        }
        #expect(Self.outcome(machine.senderSuspended(id: id, sender: 20)) == .failed(20, .cancelled, 2))
        // The cancelled element never entered the buffer.
        #expect(Self.returned(machine.next())?.element == 1)
        #expect(try Self.consumerSuspendID(machine.next()) >= 0)
    }

    @Test func senderCancelledWhileWaitingIsResumedWithItsElement() throws {
        var machine = Machine(capacity: 1, byteBudget: nil)
        _ = machine.send(1, weight: 0)
        let id = try Self.suspendedID(machine.send(2, weight: 0))
        _ = machine.senderSuspended(id: id, sender: 20)
        guard case .resumeSenders(let resumptions) = machine.senderCancelled(id: id) else {
            Issue.record("a registered sender must be resumed on cancellation"); return
        }
        #expect(Self.outcomes(resumptions) == [.failed(20, .cancelled, 2)])
    }

    @Test func cancellationAfterTheElementWasEnqueuedIsIgnored() throws {
        var machine = Machine(capacity: 1, byteBudget: nil)
        _ = machine.send(1, weight: 0)
        let id = try Self.suspendedID(machine.send(2, weight: 0))
        #expect(Self.returned(machine.next())?.senders == [])  // admitted before registration
        guard case .none = machine.senderCancelled(id: id) else {
            Issue.record("a sender whose element is in the buffer cannot be cancelled"); return
        }
        #expect(Self.outcome(machine.senderSuspended(id: id, sender: 20)) == .sent(20))
        #expect(Self.returned(machine.next())?.element == 2)
    }

    @Test func cancellingTheFirstWaiterAdmitsTheNextThatFits() throws {
        var machine = Machine(capacity: 4, byteBudget: 10)
        _ = machine.send(4, weight: 4)
        _ = machine.send(4, weight: 4)
        let big = try Self.suspendedID(machine.send(5, weight: 5))
        let small = try Self.suspendedID(machine.send(2, weight: 2))
        _ = machine.senderSuspended(id: big, sender: 10)
        _ = machine.senderSuspended(id: small, sender: 11)
        guard case .resumeSenders(let resumptions) = machine.senderCancelled(id: big) else {
            Issue.record("expected resumptions"); return
        }
        #expect(Self.outcomes(resumptions) == [.failed(10, .cancelled, 5), .sent(11)])
    }

    // MARK: Finish and fail

    @Test func finishWhileSendersWaitHandsTheirElementsBack() throws {
        var machine = Machine(capacity: 1, byteBudget: nil)
        _ = machine.send(1, weight: 0)
        let registered = try Self.suspendedID(machine.send(2, weight: 0))
        _ = machine.senderSuspended(id: registered, sender: 20)
        let unregistered = try Self.suspendedID(machine.send(3, weight: 0))

        let released = Self.released(machine.finish())
        #expect(released?.consumer == nil)
        #expect(released?.senders == [.failed(20, .finished, 2)])
        #expect(Self.outcome(machine.senderSuspended(id: unregistered, sender: 30)) == .failed(30, .finished, 3))

        #expect(Self.thrownReason(machine.send(4, weight: 0)) == .finished)
        #expect(Self.returned(machine.next())?.element == 1)
        for _ in 0..<2 {
            guard case .returnNil = machine.next() else { Issue.record("expected nil after the end"); return }
        }
        guard case .none = machine.finish() else { Issue.record("finish is idempotent"); return }
        guard case .none = machine.fail(Boom()) else { Issue.record("the first of finish and fail wins"); return }
        guard case .returnNil = machine.next() else { Issue.record("expected nil after the end"); return }
    }

    @Test func failDeliversTheBufferThenRethrowsTheError() throws {
        var machine = Machine(capacity: 1, byteBudget: nil)
        _ = machine.send(1, weight: 0)
        let first = try Self.suspendedID(machine.send(2, weight: 0))
        let second = try Self.suspendedID(machine.send(3, weight: 0))
        _ = machine.senderSuspended(id: first, sender: 20)
        _ = machine.senderSuspended(id: second, sender: 30)

        #expect(Self.released(machine.fail(Boom()))?.senders == [.failed(20, .finished, 2), .failed(30, .finished, 3)])
        #expect(Self.returned(machine.next())?.element == 1)
        for _ in 0..<2 {
            guard case .throwError(let error) = machine.next() else { Issue.record("expected the error"); return }
            #expect(error is Boom)
        }
        guard case .none = machine.finish() else { Issue.record("the first of finish and fail wins"); return }
    }

    @Test func finishWakesTheWaitingConsumerWithNil() throws {
        var machine = Machine(capacity: 1, byteBudget: nil)
        let id = try Self.consumerSuspendID(machine.next())
        _ = machine.consumerSuspended(id: id, consumer: 5)
        let released = Self.released(machine.finish())
        #expect(released?.consumer == 5)
        guard case .end? = released?.wake else { Issue.record("expected nil for the consumer"); return }
    }

    @Test func finishBeforeTheConsumerRegistersIsAnsweredAtRegistration() throws {
        var machine = Machine(capacity: 1, byteBudget: nil)
        let id = try Self.consumerSuspendID(machine.next())
        _ = machine.fail(Boom())
        // Registration answers "ask again", and the next answer is the error.
        guard case .resumeConsumer(5, .retry) = machine.consumerSuspended(id: id, consumer: 5) else {
            Issue.record("expected a retry at registration"); return
        }
        guard case .throwError(let error) = machine.next() else { Issue.record("expected the error"); return }
        #expect(error is Boom)
    }

    // MARK: The consumer going away

    @Test func consumerGoneWithElementsBufferedAndSendersWaiting() throws {
        var machine = Machine(capacity: 2, byteBudget: nil)
        _ = machine.send(1, weight: 1)
        _ = machine.send(2, weight: 2)
        let registered = try Self.suspendedID(machine.send(3, weight: 3))
        _ = machine.senderSuspended(id: registered, sender: 30)
        let unregistered = try Self.suspendedID(machine.send(4, weight: 4))

        let released = Self.released(machine.consumerTerminated())
        #expect(released?.consumer == nil)
        #expect(released?.senders == [.failed(30, .consumerTerminated, 3)])
        #expect(Self.outcome(machine.senderSuspended(id: unregistered, sender: 40)) == .failed(40, .consumerTerminated, 4))

        let statistics = machine.statistics
        #expect(statistics.elementsDiscarded == 2 && statistics.bytesDiscarded == 3)
        #expect(statistics.elementsBuffered == 0 && statistics.bytesBuffered == 0)
        #expect(Self.thrownReason(machine.send(5, weight: 0)) == .consumerTerminated)
        guard case .throwCancellation = machine.next() else { Issue.record("a gone consumer gets cancellation"); return }
        guard case .none = machine.consumerTerminated() else { Issue.record("termination is idempotent"); return }
        guard case .none = machine.finish() else { Issue.record("finish after termination does nothing"); return }
    }

    @Test func consumerCancelledBeforeRegisteringTerminatesAtOnce() throws {
        var machine = Machine(capacity: 1, byteBudget: nil)
        let id = try Self.consumerSuspendID(machine.next())
        // Senders arrive between the consumer's decision and its registration.
        _ = machine.send(1, weight: 0)
        let waiting = try Self.suspendedID(machine.send(2, weight: 0))
        _ = machine.senderSuspended(id: waiting, sender: 20)

        let released = Self.released(machine.consumerCancelled(id: id))
        #expect(released?.consumer == nil)
        #expect(released?.senders == [.failed(20, .consumerTerminated, 2)])
        guard case .resumeConsumer(5, .failure(let error)) = machine.consumerSuspended(id: id, consumer: 5) else {
            Issue.record("a consumer cancelled before registering must be resumed at once"); return
        }
        #expect(error is CancellationError)
        #expect(machine.statistics.elementsDiscarded == 1)
    }

    @Test func consumerCancelledWhileWaitingIsResumed() throws {
        var machine = Machine(capacity: 1, byteBudget: nil)
        let id = try Self.consumerSuspendID(machine.next())
        _ = machine.consumerSuspended(id: id, consumer: 5)
        let released = Self.released(machine.consumerCancelled(id: id))
        #expect(released?.consumer == 5)
        #expect(Self.isCancellation(released?.wake), "a consumer that leaves is woken with CancellationError")
        #expect(released?.senders == [])
        #expect(Self.thrownReason(machine.send(1, weight: 0)) == .consumerTerminated)
    }

    @Test func staleConsumerCancellationIsIgnored() throws {
        var machine = Machine(capacity: 1, byteBudget: nil)
        let id = try Self.consumerSuspendID(machine.next())
        _ = machine.consumerSuspended(id: id, consumer: 5)
        guard case .resumeConsumer = machine.send(1, weight: 0) else { Issue.record("expected hand-off"); return }
        guard case .none = machine.consumerCancelled(id: id) else {
            Issue.record("a cancellation after the answer must not terminate"); return
        }
        #expect(Self.isComplete(machine.send(2, weight: 0)))
    }

    @Test func terminationAfterFinishKeepsTheFinishedReason() throws {
        var machine = Machine(capacity: 2, byteBudget: nil)
        _ = machine.send(1, weight: 0)
        _ = machine.finish()
        _ = machine.consumerTerminated()
        #expect(Self.thrownReason(machine.send(2, weight: 0)) == .finished)
        #expect(machine.statistics.elementsDiscarded == 1)
    }

    @Test func secondIteratorIsRefused() {
        var machine = Machine(capacity: 1, byteBudget: nil)
        #expect(machine.makeIterator() == .makeIterator)
        #expect(machine.makeIterator() == .failSecondIterator)
    }

    @Test func suspensionsAreCountedWhenSendersResume() {
        var machine = Machine(capacity: 1, byteBudget: nil)
        machine.senderResumed(afterSuspending: .milliseconds(3))
        machine.senderResumed(afterSuspending: .milliseconds(4))
        #expect(machine.statistics.suspensionCount == 2)
        #expect(machine.statistics.suspendedDuration == .milliseconds(7))
    }
}
