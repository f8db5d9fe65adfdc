import SluiceTestSupport
import Testing
@testable import Sluice

/// ``BoundedChannel`` and ``PushBuffer`` count in the same words: the same traffic through either
/// gives the same ``ChannelStatistics``.
@Suite(.timeLimit(.minutes(3)))
struct ChannelStatisticsTests {
    @Test func theSameTrafficGivesTheSameCountersThroughEitherType() async throws {
        let channel = BoundedChannel<Int>(capacity: 4, weight: { $0 })
        let buffer = PushBuffer<Int>(capacity: 4, weight: { $0 })
        for value in [10, 20, 30] {
            try await channel.send(value)
            buffer.yield(value)
        }
        do {
            var fromChannel = channel.makeAsyncIterator()
            var fromBuffer = buffer.makeAsyncIterator()
            for expected in [10, 20] {
                #expect(try await fromChannel.next() == expected)
                #expect(try await fromBuffer.next() == expected)
            }
            let channelNow = channel.statistics
            #expect(channelNow == buffer.statistics)
            #expect(channelNow.elementsBuffered == 1 && channelNow.bytesBuffered == 30)
        }  // both iterators dropped: the element left in each is discarded
        let statistics = channel.statistics
        #expect(statistics == buffer.statistics)
        #expect(statistics.elementsAccepted == 3 && statistics.bytesAccepted == 60)
        #expect(statistics.elementsDelivered == 2 && statistics.bytesDelivered == 30)
        #expect(statistics.elementsDiscarded == 1 && statistics.bytesDiscarded == 30)
        #expect(statistics.elementsBuffered == 0 && statistics.bytesBuffered == 0)
        #expect(statistics.peakElementsBuffered == 3 && statistics.peakBytesBuffered == 60)
        #expect(statistics.elementsSpilled == 0 && statistics.suspensionCount == 0)
    }
}
