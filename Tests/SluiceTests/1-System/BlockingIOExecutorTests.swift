#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
import SluiceTestSupport
import Testing
@testable import Sluice

/// Blocking reads run on ``BlockingIOExecutor`` threads, never on the cooperative pool (2 threads
/// on a 2-core machine): two blocked readers must not stop a third task. Were they on the pool,
/// these tests would hang and meet their time limit.
@Suite(.timeLimit(.minutes(3)))
struct BlockingIOExecutorTests {
    /// A pipe read through ``FileChunks`` whose `read(2)` blocks in the seam, holding its thread,
    /// until the test releases it: "entered" opens once the reader's thread is blocked.
    struct HeldPipe {
        let ends: (read: Descriptor, write: Descriptor)
        let chunks: FileChunks
        let entered = Latch()
        let release = DispatchSemaphore(value: 0)

        init() async throws {
            ends = try makePipe()
            let entered = self.entered
            let release = self.release
            let system = SystemCalls(
                read: { descriptor, buffer, count in
                    entered.open()
                    release.wait()  // a blocking call on the reader's thread
                    return SystemCalls.live.read(descriptor, buffer, count)
                },
                write: SystemCalls.live.write, fsync: SystemCalls.live.fsync)
            chunks = try await FileChunks.open(
                "-", descriptor: ends.read, ownsDescriptor: false, chunkSize: 4096, system: system)
        }
    }

    static func collect(_ chunks: FileChunks) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in chunks { bytes += chunk.bytes }
        return bytes
    }

    @Test func twoReadersBlockedInReadDoNotStopAThirdTask() async throws {
        let first = try await HeldPipe()
        let second = try await HeldPipe()
        defer {
            for pipe in [first, second] {
                try? pipe.ends.read.close()
            }
        }
        let readers = [first, second].map { pipe in
            Task { try await Self.collect(pipe.chunks) }
        }
        // Make both pipes readable so that each reader gets past poll(2) into the held read.
        for (index, pipe) in [first, second].enumerated() {
            try [UInt8(index)].withUnsafeBytes { try pipe.ends.write.write(contentsOf: $0) }
        }
        await first.entered.wait()
        await second.entered.wait()

        // Both reader threads are blocked now; a third task still runs to completion.
        let third = Task { (1...1000).reduce(0, +) }
        #expect(await third.value == 500_500)

        for pipe in [first, second] {
            try pipe.ends.write.close()
            pipe.release.signal()  // the held read of the data
            pipe.release.signal()  // the read that finds the end
        }
        #expect(try await readers[0].value == [0])
        #expect(try await readers[1].value == [1])
    }

    @Test func twoReadersWaitingOnIdlePipesDoNotStopAThirdTask() async throws {
        let pipes = [try makePipe(), try makePipe()]
        defer { for pipe in pipes { try? pipe.read.close() } }
        var readers: [Task<[UInt8], any Error>] = []
        for pipe in pipes {
            let chunks = try await FileChunks.reading(pipe.read, chunkSize: 4096)
            readers.append(Task { try await Self.collect(chunks) })
        }
        let third = Task { (1...1000).reduce(0, +) }
        #expect(await third.value == 500_500)

        for pipe in pipes { try pipe.write.close() }
        for reader in readers { #expect(try await reader.value == []) }
    }

    /// An actor that runs on a ``BlockingIOExecutor``'s thread, as ``FileSink`` does.
    actor OnExecutor {
        nonisolated let executor: BlockingIOExecutor
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        var calls = 0

        init(_ executor: BlockingIOExecutor) {
            self.executor = executor
        }

        func call() -> Bool {
            calls += 1
            return executor.isCurrentThread
        }
    }

    /// The actor's count, read synchronously: the caller claims to run on its executor.
    static func callsAssumingIsolation(of actor: OnExecutor) -> Int {
        actor.assumeIsolated { $0.calls }
    }

    @inline(never)
    nonisolated static func nonisolatedStep(_ value: Int) async -> Int {
        value + 1
    }

    /// A task that prefers the executor runs nonisolated `async` code on its thread as the task
    /// executor's own: each call is a plain call, with no job queued and taken again (a copy's
    /// stages call a channel's `send` and a sequence's `next()` once per chunk).
    @Test func nonisolatedCallsOfAPreferringTaskQueueNoJob() async {
        let executor = BlockingIOExecutor(label: "test.nonisolated")
        let (total, enqueued, onThread) = await Task(executorPreference: executor) {
            let before = executor.itemsEnqueued
            var total = 0
            for _ in 0..<100 { total = await Self.nonisolatedStep(total) }
            return (total, executor.itemsEnqueued - before, executor.isCurrentThread)
        }.value
        #expect(total == 100)
        #expect(enqueued == 0)
        #expect(onThread)
    }

    /// An actor on the executor runs isolated on the same thread, whether it is called from a
    /// task that prefers the executor or from anywhere else, and `assumeIsolated` holds there.
    @Test func anActorOnTheExecutorRunsOnItsThread() async {
        let executor = BlockingIOExecutor(label: "test.actor")
        let actor = OnExecutor(executor)
        #expect(await actor.call())
        let fromStage = await Task(executorPreference: executor) {
            let onThread = await actor.call()
            return (onThread, Self.callsAssumingIsolation(of: actor))
        }.value
        #expect(fromStage.0)
        #expect(fromStage.1 == 2)
    }
}
