import SluiceTestSupport
import Testing
@testable import Sluice

/// ``PushBuffer/OverflowPolicy/spill(to:limit:)`` with stores of the test's own: records in
/// memory, failures on demand. What the consumer sees is what ``SpillStore`` documents: the
/// elements in order, the store's errors as they are, codec failures as ``SpillCodingError``.
@Suite(.timeLimit(.minutes(3)))
struct PushBufferSpillStoreTests {
    /// An error of ``MemoryStore``, naming the method that failed.
    struct StoreFailure: Error, Equatable {
        var method: String
    }

    /// A spill store in memory: positions are indices into its array of records. It counts the
    /// calls it gets, and fails the append with a given number (1 for the first) or the reads of
    /// a given position.
    final class MemoryStore: SpillStore {
        struct State {
            var records: [(bytes: [UInt8], weight: Int)] = []
            var appends = 0
            var resets = 0
            var closes = 0
        }

        enum Failure {
            case none
            case append(number: Int)
            case record(at: Int64)
            case bytes(at: Int64)
        }

        let failure: Failure
        private let state = LockedValue(State())

        init(failing failure: Failure = .none) {
            self.failure = failure
        }

        var appends: Int { state.withLock { $0.appends } }
        var resets: Int { state.withLock { $0.resets } }
        var closes: Int { state.withLock { $0.closes } }

        func append(_ bytes: UnsafeRawBufferPointer, weight: Int) throws {
            let copy = Array(bytes)
            let number = state.withLock { state in
                state.appends += 1
                return state.appends
            }
            if case .append(number) = failure { throw StoreFailure(method: "append") }
            state.withLock { $0.records.append((copy, weight)) }
        }

        func record(at position: Int64) throws -> SpillRecord {
            if case .record(position) = failure { throw StoreFailure(method: "record") }
            let (bytes, weight) = state.withLock { $0.records[Int(position)] }
            return SpillRecord(position: position, byteCount: bytes.count, weight: weight, nextPosition: position + 1)
        }

        func read(_ record: SpillRecord, into buffer: UnsafeMutableRawBufferPointer) throws {
            if case .bytes(record.position) = failure { throw StoreFailure(method: "read") }
            let bytes = state.withLock { $0.records[Int(record.position)].bytes }
            bytes.withUnsafeBytes { buffer.copyMemory(from: $0) }
        }

        func reset() {
            state.withLock { state in
                state.records.removeAll()
                state.resets += 1
            }
        }

        func close() {
            state.withLock { $0.closes += 1 }
        }
    }

    /// An element whose codec fails for chosen values: `encodeFails` cannot be encoded,
    /// `decodeFails` cannot be decoded.
    struct Coded: SpillCodable, Equatable {
        struct CodecFailure: Error, Equatable {
            var value: Int
        }

        static let encodeFails = -1
        static let decodeFails = -2

        var value: Int

        init(_ value: Int) {
            self.value = value
        }

        func withEncodedBytes(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
            if value == Self.encodeFails { throw CodecFailure(value: value) }
            try withUnsafeBytes(of: Int64(value).littleEndian) { try body($0) }
        }

        init(decodingByteCount count: Int, from read: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
            var raw: Int64 = 0
            try withUnsafeMutableBytes(of: &raw) { try read($0) }
            let value = Int(Int64(littleEndian: raw))
            if value == Self.decodeFails { throw CodecFailure(value: value) }
            self.init(value)
        }
    }

    static func chunk(_ byte: Int) -> Chunk {
        Chunk([UInt8](repeating: UInt8(byte), count: 16))
    }

    /// Drains `iterator`: the elements received and the error that ended the stream, if any.
    static func drain<Element>(_ iterator: inout PushBuffer<Element>.AsyncIterator) async -> ([Element], (any Error)?) {
        var elements: [Element] = []
        do {
            while let element = try await iterator.next() { elements.append(element) }
            return (elements, nil)
        } catch {
            return (elements, error)
        }
    }

    /// Drains `buffer`, expecting `elements`, then a ``SpillCodingError`` in `direction` whose
    /// cause is the codec's failure for `value`.
    static func expectCodingError(
        _ direction: SpillCodingError.Direction, of value: Int, after elements: [Coded], from buffer: PushBuffer<Coded>,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        var iterator = buffer.makeAsyncIterator()
        let (received, error) = await drain(&iterator)
        #expect(received == elements, sourceLocation: sourceLocation)
        let coding = try #require(error as? SpillCodingError, sourceLocation: sourceLocation)
        #expect(coding.direction == direction, sourceLocation: sourceLocation)
        #expect(coding.cause as? Coded.CodecFailure == Coded.CodecFailure(value: value), sourceLocation: sourceLocation)
    }

    @Test func elementsComeBackInOrderAndTheStoreIsResetWhenDrainedAndClosedAtTheEnd() async throws {
        let store = MemoryStore()
        let buffer = PushBuffer<Chunk>(capacity: 2, byteBudget: nil, policy: .spill(to: store, limit: 1 << 20))
        let first = (0..<10).map { buffer.yield(Self.chunk($0)) }
        #expect(first[2...].allSatisfy { $0.isSpilled })
        var iterator = buffer.makeAsyncIterator()
        for byte in 0..<10 { #expect(try await iterator.next() == Self.chunk(byte)) }
        // Everything was read: the next spill starts the store again.
        let second = (10..<13).map { buffer.yield(Self.chunk($0)) }
        #expect(second[2].isSpilled)
        buffer.finish()
        let (rest, error) = await Self.drain(&iterator)
        #expect(error == nil)
        #expect(rest == (10..<13).map { Self.chunk($0) })
        #expect(store.appends == 9 && store.resets == 2 && store.closes == 1)
        let statistics = buffer.statistics
        #expect(statistics.elementsAccepted == 13 && statistics.elementsDelivered == 13)
        #expect(statistics.bytesAccepted == 13 * 16 && statistics.bytesDelivered == 13 * 16)
        #expect(statistics.elementsSpilled == 9 && statistics.bytesSpilled == 9 * 16)
        #expect(statistics.elementsInSpill == 0 && statistics.bytesInSpill == 0)
        #expect(statistics.peakElementsInSpill == 8 && statistics.peakBytesInSpill == 8 * 16)
    }

    @Test func theLimitCountsEachRecordAsItsBytesPlusSixteen() async throws {
        let limit: Int64 = 2 * (16 + 16)
        let buffer = PushBuffer<Chunk>(capacity: 1, byteBudget: nil, policy: .spill(to: MemoryStore(), limit: limit))
        let results = (0..<4).map { buffer.yield(Self.chunk($0)) }
        #expect(results[1].isSpilled && results[2].isSpilled)
        guard case .rejected = results[3] else { Issue.record("past the limit: \(results[3])"); return }
        var iterator = buffer.makeAsyncIterator()
        let (elements, error) = await Self.drain(&iterator)
        #expect(elements == (0..<3).map { Self.chunk($0) })
        #expect((error as? CapacityExceededError)?.spillLimit == limit)
    }

    @Test func anAppendErrorOfTheStoreReachesTheConsumerAsItIs() async throws {
        let store = MemoryStore(failing: .append(number: 2))
        let buffer = PushBuffer<Chunk>(capacity: 1, byteBudget: nil, policy: .spill(to: store, limit: 1 << 20))
        let source = LockingSource()
        do {
            buffer.onCancel { source.stop() }
            #expect(buffer.yield(Self.chunk(1)).isSpilled == false)
            #expect(buffer.yield(Self.chunk(2)).isSpilled)
            guard case .rejected(let back, offset: 48) = buffer.yield(Self.chunk(3), offset: 48) else {
                Issue.record("a failed append was not rejected"); return
            }
            #expect(back == Self.chunk(3))
            guard case .rejected = buffer.yield(Self.chunk(4)) else { Issue.record("a later yield was accepted"); return }
            var iterator = buffer.makeAsyncIterator()
            let (elements, error) = await Self.drain(&iterator)
            #expect(elements == [Self.chunk(1), Self.chunk(2)])
            #expect(error as? StoreFailure == StoreFailure(method: "append"))
        }
        await source.stopped.wait()
        await buffer.stopsScheduledSoFarHaveRun()
        #expect(source.stops == 1)
        #expect(store.closes == 1)
    }

    enum ReadFailure: String, CaseIterable, Sendable {
        case record, bytes
    }

    /// The store fails to read its second record (its description, or its bytes inside the
    /// element's decoding): the consumer gets the store's error, never a ``SpillCodingError``;
    /// the records left are discarded; the source, which had finished, is not stopped.
    @Test(arguments: ReadFailure.allCases)
    func aReadErrorOfTheStoreReachesTheConsumerAndDiscardsTheBacklog(_ failing: ReadFailure) async throws {
        let store = MemoryStore(failing: failing == .record ? .record(at: 1) : .bytes(at: 1))
        let buffer = PushBuffer<Chunk>(
            capacity: 1, byteBudget: nil, policy: .spill(to: store, limit: 1 << 20))
        let source = LockingSource()
        buffer.onCancel { source.stop() }
        for byte in 0..<4 { buffer.yield(Self.chunk(byte)) }  // one in memory, three spilled
        buffer.finish()
        var iterator = buffer.makeAsyncIterator()
        let (elements, error) = await Self.drain(&iterator)
        #expect(elements == [Self.chunk(0), Self.chunk(1)])
        #expect(error as? StoreFailure == StoreFailure(method: failing == .record ? "record" : "read"))
        let statistics = buffer.statistics
        #expect(statistics.elementsDiscarded == 2 && statistics.bytesDiscarded == 32)
        #expect(statistics.elementsInSpill == 0)
        #expect(store.closes == 1)
        await buffer.stopsScheduledSoFarHaveRun()
        #expect(source.stops == 0, "a source that finished is not stopped")
    }

    @Test func anElementThatCannotBeEncodedIsRejectedAndTheConsumerGetsACodingError() async throws {
        let buffer = PushBuffer<Coded>(capacity: 1, policy: .spill(to: MemoryStore(), limit: 1 << 20))
        #expect(buffer.yield(Coded(0)).isSpilled == false)
        guard case .rejected(Coded(Coded.encodeFails), _) = buffer.yield(Coded(Coded.encodeFails)) else {
            Issue.record("an element that cannot be encoded was accepted"); return
        }
        try await Self.expectCodingError(.encoding, of: Coded.encodeFails, after: [Coded(0)], from: buffer)
    }

    @Test func aRecordThatCannotBeDecodedFailsTheStreamWithACodingError() async throws {
        let store = MemoryStore()
        let buffer = PushBuffer<Coded>(capacity: 1, policy: .spill(to: store, limit: 1 << 20))
        let results = [0, Coded.decodeFails, 5].map { buffer.yield(Coded($0)) }
        #expect(results[1].isSpilled && results[2].isSpilled)
        buffer.finish()
        try await Self.expectCodingError(.decoding, of: Coded.decodeFails, after: [Coded(0)], from: buffer)
        #expect(buffer.statistics.elementsDiscarded == 2, "the undecodable record and the one after it")
        #expect(store.closes == 1)
    }
}
