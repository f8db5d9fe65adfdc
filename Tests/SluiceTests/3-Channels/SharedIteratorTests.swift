import Testing
@testable import Sluice

/// One channel's consumer shared by several tasks: every element goes to one of them, once, and
/// every task returns when the channel ends, fails or is cancelled, whichever task waits in it.
/// Orders are made by events (the channel's hook once its consumer is parked, the count of tasks
/// waiting for the turn); the time limit only guards against hangs.
@Suite(.timeLimit(.minutes(3)))
struct SharedIteratorTests {
    struct Boom: Error, Equatable {}

    /// Takes elements until the end; what was taken, in the order taken.
    static func drain(_ jobs: BoundedChannel<Int>.SharedIterator) async throws -> [Int] {
        var taken: [Int] = []
        while let element = try await jobs.next() { taken.append(element) }
        return taken
    }

    /// A channel whose consumer is shared by two tasks each calling `next()` once: the first
    /// waits in the empty channel holding the turn, the second waits for the turn.
    static func holderAndWaiter() async -> (
        channel: BoundedChannel<Int>, first: Task<Int?, any Error>, second: Task<Int?, any Error>
    ) {
        let (channel, _, consumerParked) = BoundedChannelTests.makeChannel(capacity: 2)
        let jobs = BoundedChannel<Int>.SharedIterator(channel)
        let first = Task { try await jobs.next() }
        await consumerParked.wait(untilAtLeast: 1)
        let second = Task { try await jobs.next() }
        while jobs.tasksWaitingForTurn == 0 { await Task.yield() }
        return (channel, first, second)
    }

    /// Produced before anyone iterates: three tasks take the six elements, each once, each task
    /// in the channel's order, and all see the end.
    @Test func bufferedElementsGoToOneTaskEachInOrder() async throws {
        let channel = BoundedChannel<Int>(capacity: 8)
        for element in 1...6 { try await channel.send(element) }
        channel.finish()
        let jobs = BoundedChannel<Int>.SharedIterator(channel)
        let lists = try await withThrowingTaskGroup(of: [Int].self) { group in
            for _ in 0..<3 { group.addTask { try await Self.drain(jobs) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(lists.flatMap { $0 }.sorted() == Array(1...6))
        for list in lists { #expect(list == list.sorted()) }
        #expect(try await jobs.next() == nil)
    }

    /// One task waits in the empty channel holding the turn, another waits for the turn: the
    /// first element goes to the first, and the end reaches the second.
    @Test func aTaskWaitingForTheTurnGetsWhatComesAfterTheHolders() async throws {
        let (channel, _, consumerParked) = BoundedChannelTests.makeChannel(capacity: 2)
        let jobs = BoundedChannel<Int>.SharedIterator(channel)
        let first = Task { try await jobs.next() }
        await consumerParked.wait(untilAtLeast: 1)
        let second = Task { try await Self.drain(jobs) }
        while jobs.tasksWaitingForTurn == 0 { await Task.yield() }
        try await channel.send(1)
        #expect(try await first.value == 1)
        // The second task now holds the turn: it takes the next element, then the end.
        try await channel.send(2)
        channel.finish()
        #expect(try await second.value == [2])
    }

    /// The channel fails while one task waits in it and another for the turn: both throw its error.
    @Test func aFailureReachesTheHolderAndTheWaiters() async throws {
        let (channel, first, second) = await Self.holderAndWaiter()
        channel.fail(Boom())
        await #expect(throws: Boom.self) { try await first.value }
        await #expect(throws: Boom.self) { try await second.value }
    }

    /// The task holding the turn is cancelled while it waits in the channel: it throws
    /// `CancellationError`, the channel is terminated for its producers, and the task waiting
    /// for the turn, never cancelled itself, throws `CancellationError` too instead of waiting
    /// for ever.
    @Test func cancellingTheHolderReleasesTheWaiters() async throws {
        let (channel, first, second) = await Self.holderAndWaiter()
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        await #expect(throws: CancellationError.self) { try await second.value }
        let error = await BoundedChannelTests.send(1, to: channel)
        #expect(error?.reason == .consumerTerminated)
    }

    /// One task prepares the element it took while another asks for the next: the other waits
    /// for the turn until the preparation ends, then takes the element after it.
    @Test func aTaskPreparingItsElementHoldsTheTurn() async throws {
        let channel = BoundedChannel<Int>(capacity: 4)
        for element in 1...2 { try await channel.send(element) }
        channel.finish()
        let jobs = BoundedChannel<Int>.SharedIterator(channel)
        let (preparing, entered) = AsyncStream.makeStream(of: Void.self)
        let gate = LockedValue<CheckedContinuation<Void, Never>?>(nil)
        let first = Task {
            try await jobs.next { element in
                await withCheckedContinuation { continuation in
                    gate.withLock { $0 = continuation }
                    entered.yield()
                }
                return element * 10
            }
        }
        var inside = preparing.makeAsyncIterator()
        await inside.next()
        let second = Task { try await jobs.next() }
        while jobs.tasksWaitingForTurn == 0 { await Task.yield() }
        gate.withLock { $0 }!.resume()
        #expect(try await first.value == 10)
        #expect(try await second.value == 2)
        #expect(try await jobs.next() == nil)
    }
}
