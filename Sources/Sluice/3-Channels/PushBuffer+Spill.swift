extension PushBuffer {
    /// Where and how elements are spilled: what a spill policy carries.
    @usableFromInline
    struct SpillConfiguration: Sendable {
        /// The most bytes the store may hold, each record counted as its bytes plus
        /// ``Spill/recordOverhead``.
        let limit: Int64
        /// Makes the store of one buffer.
        let makeStore: @Sendable () -> any SpillStore
        /// ``SpillCodable/withEncodedBytes(_:)`` of the element type.
        let encode: @Sendable (Element, (UnsafeRawBufferPointer) throws -> Void) throws -> Void
        /// ``SpillCodable/init(decodingByteCount:from:)`` of the element type.
        let decode: @Sendable (Int, (UnsafeMutableRawBufferPointer) throws -> Void) throws -> Element
    }

    /// The spill writer's state, guarded by its own lock.
    @usableFromInline
    struct SpillWriter: Sendable {
        /// The bytes the store holds by the limit's measure.
        var size: Int64 = 0
        /// The stream ended and the store was closed; it is never written again.
        var isClosed = false
    }

    /// The spill store of one buffer, with its writer's lock, its codec and its read-back thread.
    ///
    /// The writer's lock is held by a spilling yield from its decision to its record being
    /// accounted: producers write one at a time, in the order the machine decides, while the
    /// consumer reads earlier records without taking this lock. Errors of the store reach the
    /// consumer as they are; a failure of the element's codec reaches it as a
    /// ``SpillCodingError`` whose cause is the codec's error.
    @usableFromInline
    final class Spill: Sendable {
        /// The bytes the limit counts for each record beside its own: its length and its weight,
        /// 8 bytes each (what a spill file writes in front of the record).
        static var recordOverhead: Int64 { 16 }

        let configuration: SpillConfiguration
        let store: any SpillStore
        @usableFromInline let writer = LockedValue(SpillWriter())
        let executor = BlockingIOExecutor(label: "sluice.push-buffer.spill")

        init(configuration: SpillConfiguration) {
            self.configuration = configuration
            self.store = configuration.makeStore()
        }

        /// Closes the store (releasing its space) for good. Idempotent; called by the consumer
        /// when its stream ends and when the buffer is freed.
        @usableFromInline
        func close() {
            let wasClosed = writer.withLock { writer in
                defer { writer.isClosed = true }
                return writer.isClosed
            }
            if !wasClosed { store.close() }
        }

        /// Why a record was not written.
        enum WriteFailure: Error {
            /// It would have passed the limit.
            case limitReached
            /// The store or the codec failed with this error.
            case failed(any Error)
        }

        /// Appends `element`, of `weight` bytes, as one record; runs under the writer's lock.
        ///
        /// - Parameter rewind: whether everything was read: the store starts again first.
        func append(_ element: Element, weight: Int, rewind: Bool, to writer: inout SpillWriter) throws(WriteFailure) {
            precondition(!writer.isClosed, "PushBuffer spilled after its stream ended")
            var storeError: (any Error)?
            var appended = false
            do {
                if rewind {
                    do { try store.reset() } catch { storeError = error; throw error }
                    writer.size = 0
                }
                try configuration.encode(element) { bytes in
                    let size = writer.size + Self.recordOverhead + Int64(bytes.count)
                    guard size <= configuration.limit else { throw WriteFailure.limitReached }
                    do { try store.append(bytes, weight: weight) } catch { storeError = error; throw error }
                    writer.size = size
                    appended = true
                }
            } catch let failure as WriteFailure {
                throw failure
            } catch {
                throw .failed(storeError ?? SpillCodingError(.encoding, cause: error))
            }
            precondition(appended, "SpillCodable.withEncodedBytes(_:) returned without presenting the bytes")
        }

        /// Reads records back into what the memory buffer admits: at most `read.maxRecords`, and
        /// with a byte budget, the records that fit it as yields would
        /// (``WeightedQueue/admits(weight:count:bytes:capacity:byteBudget:)``: the first always,
        /// then each while the sum of weights stays within the budget).
        ///
        /// Blocking: runs on ``executor``.
        ///
        /// - Returns: the elements with their weights, and the position of the next unread record.
        /// - Throws: the store's error, or a ``SpillCodingError`` when an element cannot be decoded.
        func readRecords(_ read: SpillRead) throws -> (records: [WeightedQueue<Element>.Item], nextPosition: Int64) {
            var records: [WeightedQueue<Element>.Item] = []
            var position = read.position
            var bytes = 0
            while records.count < read.maxRecords {
                let record = try store.record(at: position)
                let admitted = WeightedQueue<Element>.admits(
                    weight: record.weight, count: records.count, bytes: bytes,
                    capacity: read.maxRecords, byteBudget: read.byteBudget)
                guard admitted else { break }  // this record stays in the store for the next read
                var storeError: (any Error)?
                let element: Element
                do {
                    element = try configuration.decode(record.byteCount) { buffer in
                        do { try store.read(record, into: buffer) } catch { storeError = error; throw error }
                    }
                } catch {
                    throw storeError ?? SpillCodingError(.decoding, cause: error)
                }
                position = record.nextPosition
                records.append(.init(element: element, weight: record.weight))
                bytes += record.weight
            }
            return (records, position)
        }
    }
}

extension PushBuffer.Storage {
    /// What a spilling yield decided under the spill writer's lock.
    @usableFromInline
    enum SpillOutcome: Sendable {
        case decided(Machine.YieldAction)
        case written(Machine.SpillWrittenAction)
        case failed(Machine.SpillFailedAction)
    }

    /// A yield with a spill policy: decide and write under the spill writer's lock, act after.
    @usableFromInline
    func yield(_ element: Element, weight: Int, offset: Int64?, spilling spill: PushBuffer.Spill) -> PushBuffer.YieldResult {
        let outcome = spill.writer.withLock { (writer: inout PushBuffer.SpillWriter) -> SpillOutcome in
            decideAndWrite(element, weight: weight, spill: spill, writer: &writer)
        }
        switch outcome {
        case .decided(let action):
            return act(action, element: element, offset: offset)
        case .written(.spilled(let demand, let consumer)):
            consumer?.resume(returning: .retry)
            return .spilled(demand)
        case .written(.terminate), .failed(.terminate):
            return .terminated(element)
        case .failed(.reject(let stopSource, let consumer)):
            consumer?.resume(returning: .retry)
            if stopSource { gate.cancel() }
            return .rejected(element, offset: offset)
        }
    }

    /// Runs under the spill writer's lock: the machine's decision, and the write it asks for.
    private func decideAndWrite(
        _ element: Element, weight: Int, spill: PushBuffer.Spill, writer: inout PushBuffer.SpillWriter
    ) -> SpillOutcome {
        let action = machine.withLock { $0.yield(element, weight: weight) }
        guard case .spill(let rewind) = action else { return .decided(action) }
        do throws(PushBuffer.Spill.WriteFailure) {
            try spill.append(element, weight: weight, rewind: rewind, to: &writer)
            return .written(machine.withLock { $0.spillWritten(weight: weight) })
        } catch {
            let failure: (any Error)? = switch error {
            case .limitReached: nil
            case .failed(let error): error
            }
            let limit = spill.configuration.limit
            return .failed(machine.withLock { $0.spillFailed(failure, spillLimit: limit) })
        }
    }

    /// Reads spilled records back on the spill's blocking-I/O thread, then lets the machine
    /// decide what the consumer returns.
    @usableFromInline
    func refill(_ read: PushBuffer.SpillRead) async -> Machine.NextAction {
        guard let spill else { preconditionFailure("spilled records without a spill policy") }
        do {
            let (records, nextPosition) = try await withTaskExecutorPreference(spill.executor) {
                try spill.readRecords(read)
            }
            return machine.withLock { $0.spillRead(records, nextPosition: nextPosition) }
        } catch {
            if machine.withLock({ $0.spillReadFailed(error) }) { gate.cancel() }
            return .throwError(error)
        }
    }
}
