import SluiceTestSupport
import Testing
@testable import Sluice

@Suite(.timeLimit(.minutes(3)))
struct ProgressHubTests {
    static func snapshot(_ bytes: Int64, isFinal: Bool = false) -> ProgressSnapshot {
        ProgressSnapshot(
            bytesCompleted: bytes, bytesWritten: bytes, totalBytes: nil, fraction: nil,
            elapsed: .zero, bytesPerSecond: 0, bufferedBytes: 0, peakBufferedBytes: 0,
            producerSuspended: .zero, isFinal: isFinal
        )
    }

    static let final = snapshot(1_000_000, isFinal: true)

    static func collect(_ stream: AsyncStream<ProgressSnapshot>) async -> [ProgressSnapshot] {
        var received: [ProgressSnapshot] = []
        for await snapshot in stream { received.append(snapshot) }
        return received
    }

    @Test func latestIsNilBeforeTheFirstPublish() {
        let hub = ProgressHub()
        #expect(hub.latest == nil)
        #expect(hub.subscriberCount == 0)
    }

    @Test func publishBeforeIterationDeliversTheNewestNotTheOldest() async {
        let hub = ProgressHub()
        let stream = hub.subscribe()
        for bytes in 1...100 { hub.publish(Self.snapshot(Int64(bytes))) }
        hub.finish(with: Self.final)

        let received = await Self.collect(stream)
        #expect(received.count <= 2)
        #expect(received.last == Self.final)
        #expect(!received.contains(Self.snapshot(1)))
    }

    @Test func subscriberAfterFinishGetsExactlyTheFinalSnapshot() async {
        let hub = ProgressHub()
        hub.publish(Self.snapshot(1))
        hub.finish(with: Self.final)
        let received = await Self.collect(hub.subscribe())
        #expect(received == [Self.final])
        #expect(hub.subscriberCount == 0)
    }

    @Test func subscriberAfterPublishStartsWithTheLatest() async {
        let hub = ProgressHub()
        hub.publish(Self.snapshot(1))
        hub.publish(Self.snapshot(2))
        var iterator = hub.subscribe().makeAsyncIterator()
        #expect(await iterator.next() == Self.snapshot(2))
        hub.finish(with: Self.final)
        #expect(await iterator.next() == Self.final)
        #expect(await iterator.next() == nil)
    }

    @Test func laterPublishAndFinishAreIgnored() async {
        let hub = ProgressHub()
        let stream = hub.subscribe()
        hub.finish(with: Self.final)
        hub.publish(Self.snapshot(5))
        hub.finish(with: Self.snapshot(6, isFinal: true))
        #expect(hub.latest == Self.final)
        #expect(await Self.collect(stream) == [Self.final])
    }

    @Test func fourSubscribersAllReceiveTheFinalSnapshotAndEnd() async {
        let hub = ProgressHub()
        let streams = (0..<4).map { _ in hub.subscribe() }
        #expect(hub.subscriberCount == 4)
        let consumers = streams.map { stream in Task { await Self.collect(stream) } }
        for bytes in 1...50 { hub.publish(Self.snapshot(Int64(bytes))) }
        hub.finish(with: Self.final)
        for consumer in consumers {
            let received = await consumer.value
            #expect(received.last == Self.final)
        }
        #expect(hub.subscriberCount == 0)
    }

    @Test func cancellingOneSubscriberLeavesTheOther() async {
        let hub = ProgressHub()
        let a = hub.subscribe()
        let b = hub.subscribe()
        let (ackA, ackAContinuation) = AsyncStream<ProgressSnapshot>.makeStream()
        let (ackB, ackBContinuation) = AsyncStream<ProgressSnapshot>.makeStream()
        var acksA = ackA.makeAsyncIterator()
        var acksB = ackB.makeAsyncIterator()

        let consumerA = Task {
            for await snapshot in a { ackAContinuation.yield(snapshot) }
        }
        let consumerB = Task {
            var received: [ProgressSnapshot] = []
            for await snapshot in b {
                received.append(snapshot)
                ackBContinuation.yield(snapshot)
            }
            return received
        }

        hub.publish(Self.snapshot(1))
        #expect(await acksA.next() == Self.snapshot(1))
        #expect(await acksB.next() == Self.snapshot(1))

        consumerA.cancel()
        await consumerA.value
        #expect(hub.subscriberCount == 1)

        // Lockstep with B: each snapshot is acknowledged before the next is published.
        for bytes in 2...10 {
            hub.publish(Self.snapshot(Int64(bytes)))
            #expect(await acksB.next() == Self.snapshot(Int64(bytes)))
        }
        hub.finish(with: Self.final)
        let expected = (1...10).map { Self.snapshot(Int64($0)) } + [Self.final]
        #expect(await consumerB.value == expected)
        #expect(hub.subscriberCount == 0)
    }

    @Test func cancellingBeforeIteratingRemovesTheSubscriber() async {
        let hub = ProgressHub()
        let other = hub.subscribe()
        let consumer = Task { [stream = hub.subscribe()] in
            withUnsafeCurrentTask { $0?.cancel() }
            return await Self.collect(stream)
        }
        let received = await consumer.value
        #expect(received.isEmpty)
        #expect(hub.subscriberCount == 1)
        hub.finish(with: Self.final)
        #expect(await Self.collect(other) == [Self.final])
    }

    @Test func subscriberCountDropsWhenIterationStops() async {
        let hub = ProgressHub()
        hub.publish(Self.snapshot(1))
        do {
            let stream = hub.subscribe()
            #expect(hub.subscriberCount == 1)
            for await _ in stream { break }
        }
        #expect(hub.subscriberCount == 0)
    }

    @Test func deinitEndsStreamsOfAnUnfinishedHub() async {
        var hub: ProgressHub? = ProgressHub()
        let stream = hub!.subscribe()
        hub!.publish(Self.snapshot(1))
        hub = nil
        #expect(await Self.collect(stream) == [Self.snapshot(1)])
    }

    @Test(arguments: 0..<10)
    func concurrentPublishersNeverReorderTheFinalSnapshot(round: Int) async {
        let hub = ProgressHub()
        let early = (0..<3).map { _ in hub.subscribe() }
        let consumers = early.map { stream in Task { await Self.collect(stream) } }
        let lateConsumers = await withTaskGroup(of: Task<[ProgressSnapshot], Never>?.self) { group in
            for publisher in 0..<4 {
                group.addTask {
                    for bytes in 0..<200 { hub.publish(Self.snapshot(Int64(publisher * 1_000 + bytes))) }
                    return nil
                }
            }
            for _ in 0..<3 {
                group.addTask {
                    let stream = hub.subscribe()
                    return Task { await Self.collect(stream) }
                }
            }
            group.addTask {
                hub.finish(with: Self.final)
                return nil
            }
            var late: [Task<[ProgressSnapshot], Never>] = []
            for await task in group { if let task { late.append(task) } }
            return late
        }
        for consumer in consumers + lateConsumers {
            let received = await consumer.value
            #expect(received.last == Self.final, "round \(round)")
            #expect(received.filter { $0 == Self.final }.count == 1, "round \(round)")
        }
        #expect(hub.subscriberCount == 0)
    }
}
