import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import Testing
@testable import Sluice
import SluiceTestSupport

/// The stop closure of `PushBuffer.fromCallbacks` against a source that holds an error-checking
/// mutex across every call into Sluice and takes it in its stop closure (``LockingSource``):
/// whatever ends the stream, the stop closure runs exactly once, never inside a call the source
/// makes (no `EDEADLK`) and never inside `Task.cancel()` (no hang). It may run after the call
/// that caused it returns, so the tests wait for it on an event, never with `confirmation`.
@Suite(.timeLimit(.minutes(3)))
struct PushBufferCallbackTests {
    struct Started<Element: Sendable> {
        let buffer: PushBuffer<Element>
        let deliver: @Sendable (Element) -> PushBuffer<Element>.YieldResult
        let complete: @Sendable ((any Error)?) -> Void
    }

    /// Starts a callback source with its lock held around `fromCallbacks`, keeping its callbacks.
    static func start<Element: Sendable>(
        _ source: LockingSource, capacity: Int, policy: PushBuffer<Element>.OverflowPolicy = .fail,
        weight: @escaping @Sendable (Element) -> Int = { _ in 0 }
    ) -> Started<Element> {
        var callbacks: (@Sendable (Element) -> PushBuffer<Element>.YieldResult, @Sendable ((any Error)?) -> Void)?
        let buffer = source.locked {
            PushBuffer<Element>.fromCallbacks(capacity: capacity, policy: policy, weight: weight) { deliver, complete in
                callbacks = (deliver, complete)
                return { source.stop() }
            }
        }
        return Started(buffer: buffer, deliver: callbacks!.0, complete: callbacks!.1)
    }

    /// Waits for the stop closure, then checks it ran once, outside the source's calls.
    static func expectStoppedOnceOutsideTheSourcesCalls<Element>(_ source: LockingSource, _ buffer: PushBuffer<Element>) async {
        await source.stopped.wait()
        await buffer.stopsScheduledSoFarHaveRun()
        #expect(source.stops == 1)
        #expect(source.lockResults == [0], "EDEADLK is \(EDEADLK): the stop closure ran inside a call of the source")
    }

    static func chunk(_ byte: UInt8, count: Int = 4) -> Chunk {
        Chunk([UInt8](repeating: byte, count: count))
    }

    @Test func overflowStopsTheSourceOutsideItsDeliver() async {
        let source = LockingSource()
        let started: Started<Int> = Self.start(source, capacity: 2)
        let results = (1...3).map { value in source.locked { started.deliver(value) } }
        guard case .rejected(3, _) = results[2] else { Issue.record("third delivery answered \(results[2])"); return }
        await Self.expectStoppedOnceOutsideTheSourcesCalls(source, started.buffer)
        let (elements, error) = await PushBufferTests.drain(started.buffer)
        #expect(elements == [1, 2])
        #expect(error is CapacityExceededError)
        await started.buffer.stopsScheduledSoFarHaveRun()
        #expect(source.stops == 1)
    }

    @Test func overflowInsideStartStopsTheSourceAfterFromCallbacksReturns() async {
        let source = LockingSource()
        let buffer = source.locked {
            PushBuffer<Int>.fromCallbacks(capacity: 2) { deliver, _ in
                for value in 1...3 { _ = deliver(value) }
                return { source.stop() }  // the stream already overflowed: scheduled at install
            }
        }
        await Self.expectStoppedOnceOutsideTheSourcesCalls(source, buffer)
        let (elements, error) = await PushBufferTests.drain(buffer)
        #expect(elements == [1, 2])
        #expect(error is CapacityExceededError)
    }

    @Test func spillLimitStopsTheSourceOutsideItsDeliver() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let source = LockingSource()
        // Room for one record of a 4-byte chunk.
        let limit = PushBuffer<Chunk>.Spill.recordOverhead + 4
        let started: Started<Chunk> = Self.start(
            source, capacity: 1, policy: .spill(directory: directory.path, limit: limit), weight: { $0.count })
        let results = (1...3).map { byte in source.locked { started.deliver(Self.chunk(UInt8(byte))) } }
        guard case .spilled = results[1], case .rejected = results[2] else { Issue.record("answered \(results)"); return }
        await Self.expectStoppedOnceOutsideTheSourcesCalls(source, started.buffer)
        let (elements, error) = await PushBufferTests.drain(started.buffer)
        #expect(elements == [Self.chunk(1), Self.chunk(2)])
        #expect((error as? CapacityExceededError)?.spillLimit == limit)
    }

    @Test func spillWriteFailureStopsTheSourceOutsideItsDeliver() async {
        let source = LockingSource()
        let started: Started<Chunk> = Self.start(
            source, capacity: 1, policy: .spill(directory: "/nonexistent/sluice", limit: 1 << 20), weight: { $0.count })
        let results = (1...2).map { byte in source.locked { started.deliver(Self.chunk(UInt8(byte))) } }
        guard case .rejected = results[1] else { Issue.record("second delivery answered \(results[1])"); return }
        await Self.expectStoppedOnceOutsideTheSourcesCalls(source, started.buffer)
        let (elements, error) = await PushBufferTests.drain(started.buffer)
        #expect(elements == [Self.chunk(1)])
        #expect((error as? FileError)?.code == .notFound)
    }

    @Test func consumerBreakStopsTheSourceOnce() async throws {
        let source = LockingSource()
        let started: Started<Int> = Self.start(source, capacity: 4)
        for value in 1...3 { _ = source.locked { started.deliver(value) } }
        for try await _ in started.buffer { break }
        await Self.expectStoppedOnceOutsideTheSourcesCalls(source, started.buffer)
        guard case .terminated(4) = source.locked({ started.deliver(4) }) else {
            Issue.record("delivery after the consumer left accepted"); return
        }
    }

    @Test func consumerCancelledFromAThreadHoldingTheSourceLockStopsTheSourceOutsideCancel() async {
        let source = LockingSource()
        let started: Started<Int> = Self.start(source, capacity: 4)
        let buffer = started.buffer
        let consumer = Task {
            var iterator = buffer.makeAsyncIterator()
            return try await iterator.next()
        }
        // Wait until the consumer is parked in next(), inside its cancellation handler's scope.
        while !buffer.storage.machine.withLock({ if case .waiting = $0.core.consumer { true } else { false } }) {
            await Task.yield()
        }
        let cancelled = Latch()
        DispatchQueue(label: "sluice.test.canceller").async {
            // The source cancels its consumer with its own lock held: a stop closure run inside
            // Task.cancel() would get EDEADLK here.
            source.locked { consumer.cancel() }
            cancelled.open()
        }
        await cancelled.wait()
        await #expect(throws: CancellationError.self) { _ = try await consumer.value }
        await Self.expectStoppedOnceOutsideTheSourcesCalls(source, buffer)
    }

    @Test func finishUnderTheSourceLockNeverStopsTheSource() async {
        let source = LockingSource()
        let started: Started<Int> = Self.start(source, capacity: 4)
        for value in 1...2 { _ = source.locked { started.deliver(value) } }
        source.locked { started.complete(nil) }
        let (elements, error) = await PushBufferTests.drain(started.buffer)
        #expect(elements == [1, 2])
        #expect(error == nil)
        await started.buffer.stopsScheduledSoFarHaveRun()
        #expect(source.stops == 0, "a source that ended the stream itself is not stopped")
    }

    @Test func sourceThatCompletesInsideStartIsNeverStopped() async {
        let source = LockingSource()
        let buffer = source.locked {
            PushBuffer<Int>.fromCallbacks(capacity: 8) { deliver, complete in
                for value in 1...3 { _ = deliver(value) }
                complete(nil)
                return { source.stop() }
            }
        }
        let (elements, error) = await PushBufferTests.drain(buffer)
        #expect(elements == [1, 2, 3])
        #expect(error == nil)
        await buffer.stopsScheduledSoFarHaveRun()
        #expect(source.stops == 0)
    }

    @Test func bufferDroppedWithoutAConsumerStopsItsSource() async {
        let source = LockingSource()
        let deliver: @Sendable (Int) -> PushBuffer<Int>.YieldResult
        do {
            let started: Started<Int> = Self.start(source, capacity: 4)
            deliver = started.deliver
            _ = source.locked { deliver(1) }
        }  // never iterated; the source keeps only `deliver`, which does not keep the buffer
        await source.stopped.wait()
        #expect(source.lockResults == [0])
        guard case .terminated(2) = source.locked({ deliver(2) }) else {
            Issue.record("delivery into a freed buffer accepted"); return
        }
        #expect(source.stops == 1)
    }

    @Test func hookInstalledUnderTheSourceLockAfterTheConsumerLeftIsScheduled() async throws {
        let source = LockingSource()
        let buffer = PushBuffer<Int>(capacity: 4)
        buffer.yield(1)
        for try await _ in buffer { break }
        source.locked { buffer.onCancel { source.stop() } }  // not run here: scheduled
        await Self.expectStoppedOnceOutsideTheSourcesCalls(source, buffer)
    }
}
