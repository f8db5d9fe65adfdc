import Testing
@testable import Sluice
import SluiceTestSupport

/// C53: a `PushBuffer<Chunk>` weighs each chunk by its bytes however it is made: with or
/// without `byteBudget:`, by its initializer or by `fromCallbacks`, failing or spilling; a
/// buffer of other elements weighs them 0 unless given a weight.
@Suite(.timeLimit(.minutes(3)))
struct PushBufferWeightTests {
    enum Making: String, CaseIterable, Sendable {
        case initializer, initializerWithBudget, callbacks, callbacksWithBudget
    }

    static func make(_ making: Making, policy: PushBuffer<Chunk>.OverflowPolicy) -> (PushBuffer<Chunk>, @Sendable (Chunk) -> PushBuffer<Chunk>.YieldResult) {
        switch making {
        case .initializer:
            let buffer = PushBuffer<Chunk>(capacity: 4, policy: policy)
            return (buffer, { buffer.yield($0) })
        case .initializerWithBudget:
            let buffer = PushBuffer<Chunk>(capacity: 4, byteBudget: nil, policy: policy)
            return (buffer, { buffer.yield($0) })
        case .callbacks, .callbacksWithBudget:
            let deliver = LockedValue<(@Sendable (Chunk) -> PushBuffer<Chunk>.YieldResult)?>(nil)
            let buffer = making == .callbacks
                ? PushBuffer<Chunk>.fromCallbacks(capacity: 4, policy: policy) { given, _ in deliver.withLock { $0 = given }; return {} }
                : PushBuffer<Chunk>.fromCallbacks(capacity: 4, byteBudget: nil, policy: policy) { given, _ in
                    deliver.withLock { $0 = given }
                    return {}
                }
            let yield = deliver.withLock { $0! }
            return (buffer, yield)
        }
    }

    @Test(arguments: Making.allCases)
    func aChunkWeighsItsBytesWhenTheBufferFails(making: Making) async throws {
        let (buffer, yield) = Self.make(making, policy: .fail)
        for _ in 0..<5 { _ = yield(Chunk([UInt8](repeating: 7, count: 100))) }
        #expect(buffer.statistics.bytesAccepted == 400)
        #expect(buffer.statistics.peakBytesBuffered == 400)
        var received = 0
        do {
            for try await chunk in buffer { received += chunk.count }
            Issue.record("the stream did not fail")
        } catch let error as CapacityExceededError {
            #expect(error.bufferedBytes == 400, "\(error)")
            #expect(error.description.contains("(400 bytes)"), "\(error)")
        }
        #expect(received == 400)
    }

    @Test(arguments: Making.allCases)
    func aChunkWeighsItsBytesWhenTheBufferSpills(making: Making) async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let (buffer, yield) = Self.make(making, policy: .spill(directory: directory.path, limit: 1 << 20))
        for _ in 0..<10 { _ = yield(Chunk([UInt8](repeating: 7, count: 100))) }
        #expect(buffer.statistics.bytesSpilled == 600, "\(buffer.statistics)")
        #expect(buffer.statistics.bytesAccepted == 1000)
    }

    @Test func otherElementsWeighNothingUnlessGivenAWeight() {
        let unweighed = PushBuffer<Int>(capacity: 4)
        _ = unweighed.yield(5)
        #expect(unweighed.statistics.bytesAccepted == 0)
        let weighed = PushBuffer<Int>(capacity: 4, weight: { $0 })
        _ = weighed.yield(5)
        #expect(weighed.statistics.bytesAccepted == 5)
    }
}
