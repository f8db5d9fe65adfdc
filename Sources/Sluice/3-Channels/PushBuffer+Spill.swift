#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension PushBuffer.OverflowPolicy where Element: SpillCodable {
    /// Past capacity, append elements to a spill file in `directory` and read them back in order.
    ///
    /// The file is created with `O_CREAT | O_EXCL` and mode 0600 as
    /// `.sluice-spill-<random>.tmp` and unlinked at once, so its name never outlives the moment
    /// of creation and a crash leaves nothing behind; its space is released when the stream ends,
    /// fails or is cancelled (the descriptor is closed). The write happens on the yielding thread
    /// inside ``PushBuffer/yield(_:)`` (a regular-file `pwrite(2)`: bounded time, never a wait
    /// for the consumer); reading back runs on the buffer's blocking-I/O thread. Whenever the
    /// consumer has read every record, the next spill starts again at offset 0, so the file
    /// grows only with the backlog's peak.
    ///
    /// - Parameters:
    ///   - directory: where the spill file is created; it must be writable. A directory on the
    ///     same disk as the output keeps temporary space in one place.
    ///   - limit: the most bytes the spill file may hold (records with their 16-byte headers);
    ///     the yield that would pass it is rejected and the stream fails with
    ///     ``CapacityExceededError`` (``CapacityExceededError/spillLimit`` set).
    public static func spill(directory: FilePath, limit: Int64) -> Self {
        precondition(limit >= 0, "spill limit must not be negative")
        return Self(kind: .spill(PushBuffer.SpillConfiguration(
            directory: directory, limit: limit,
            encode: { element, body in try element.withEncodedBytes(body) },
            decode: { count, read in try Element(decodingByteCount: count, from: read) })))
    }
}

extension PushBuffer {
    /// Where and how elements are spilled.
    @usableFromInline
    struct SpillConfiguration: Sendable {
        let directory: FilePath
        let limit: Int64
        let encode: @Sendable (Element, (UnsafeRawBufferPointer) throws -> Void) throws -> Void
        let decode: @Sendable (Int, (UnsafeMutableRawBufferPointer) throws -> Void) throws -> Element
    }

    /// The spill writer's state: the file and where the next record goes.
    ///
    /// Guarded by its own lock, held by a spilling yield from its decision to its record being
    /// accounted: producers write one at a time, in the order the machine decides, while the
    /// consumer reads earlier records with `pread(2)` without taking this lock.
    @usableFromInline
    struct SpillWriter: Sendable {
        var descriptor: FileDescriptor?
        /// The offset of the next record.
        var offset: Int64 = 0
        /// The stream ended and the file was closed; it is never reopened.
        var isClosed = false
    }

    /// The spill file of one buffer: its writer, codec and read-back thread.
    @usableFromInline
    final class Spill: Sendable {
        let configuration: SpillConfiguration
        @usableFromInline let writer = LockedValue(SpillWriter())
        let executor = BlockingIOExecutor(label: "sluice.push-buffer.spill")

        /// The size of a record's header: the payload's length, then the element's weight (as the
        /// yield measured it), 8 bytes little-endian each. Read-back admits records by that
        /// weight before decoding them, and never calls `weight` again.
        static var headerSize: Int64 { 16 }

        init(configuration: SpillConfiguration) {
            self.configuration = configuration
        }

        /// Closes the spill file (releasing its space) for good. Idempotent; called by the
        /// consumer when its stream ends and when the buffer is freed.
        @usableFromInline
        func close() {
            let descriptor = writer.withLock { writer -> FileDescriptor? in
                writer.isClosed = true
                defer { writer.descriptor = nil }
                return writer.descriptor
            }
            try? descriptor?.close()
        }

        /// Why a record was not written.
        enum WriteFailure: Error {
            /// It would have passed the limit.
            case limitReached
            /// A system call failed.
            case system(FileError)
        }

        /// Appends `element`, of `weight` bytes, as one record; runs under the writer's lock.
        func append(_ element: Element, weight: Int, to writer: inout SpillWriter) throws(WriteFailure) -> FileDescriptor {
            let descriptor: FileDescriptor
            if let open = writer.descriptor {
                descriptor = open
            } else {
                precondition(!writer.isClosed, "PushBuffer spilled after its stream ended")
                descriptor = try create()
                writer.descriptor = descriptor
            }
            let start = writer.offset
            var failure: WriteFailure?
            do {
                try configuration.encode(element) { bytes in
                    let end = start + Self.headerSize + Int64(bytes.count)
                    guard end <= configuration.limit else { throw WriteFailure.limitReached }
                    var header = (UInt64(bytes.count).littleEndian, UInt64(weight).littleEndian)
                    try withUnsafeBytes(of: &header) { try write($0, to: descriptor, at: start) }
                    try write(bytes, to: descriptor, at: start + Self.headerSize)
                    writer.offset = end
                }
            } catch let error as WriteFailure {
                failure = error
            } catch {
                failure = .system(FileError(code: .io, operation: .write, path: configuration.directory, cause: error))
            }
            if let failure { throw failure }
            return descriptor
        }

        /// `pwrite(2)` of every byte of `bytes` at `offset`, retried on `EINTR` and short writes.
        private func write(_ bytes: UnsafeRawBufferPointer, to descriptor: FileDescriptor, at offset: Int64) throws(WriteFailure) {
            var written = 0
            while written < bytes.count {
                let count = pwrite(descriptor.rawValue, bytes.baseAddress! + written, bytes.count - written, off_t(offset) + off_t(written))
                if count > 0 {
                    written += count
                    continue
                }
                // A write of 0 bytes made no progress and reported nothing: fail, never spin.
                let error = count == 0 ? Errno.ioError : Errno.current
                if error == .interrupted { continue }
                throw .system(.write(path: configuration.directory, errno: error))
            }
        }

        /// Creates `.sluice-spill-<random>.tmp` with `O_CREAT | O_EXCL` in the directory and
        /// unlinks it at once.
        private func create() throws(WriteFailure) -> FileDescriptor {
            do {
                let (descriptor, path) = try FileDescriptor.createUnique(
                    in: configuration.directory, prefix: ".sluice-spill-", flags: O_RDWR, permissions: 0o600)
                _ = path.withCString { unlink($0) }
                return descriptor
            } catch {
                throw .system(.create(path: configuration.directory, errno: error.errno ?? .ioError))
            }
        }

        /// Reads records back into what the memory buffer admits: at most `read.maxRecords`, and
        /// with a byte budget, the records that fit it as yields would (``BufferAdmission``: the
        /// first always, then each while the sum of weights stays within the budget).
        ///
        /// Blocking: runs on ``executor``.
        func readRecords(
            _ read: StateMachine<Storage.ConsumerContinuation>.SpillRead
        ) throws(FileError) -> (records: [StateMachine<Storage.ConsumerContinuation>.Buffered], endOffset: Int64) {
            var records: [StateMachine<Storage.ConsumerContinuation>.Buffered] = []
            var offset = read.offset
            var bytes = 0
            while records.count < read.maxRecords {
                var header = (UInt64(0), UInt64(0))
                try withUnsafeMutableBytes(of: &header) { (buffer) throws(FileError) in
                    try readFully(buffer, from: read.descriptor, at: offset)
                }
                let count = Int(UInt64(littleEndian: header.0))
                let weight = Int(UInt64(littleEndian: header.1))
                let admitted = BufferAdmission.admits(
                    weight: weight, bufferedCount: records.count, bufferedBytes: bytes,
                    capacity: read.maxRecords, byteBudget: read.byteBudget)
                guard admitted else { break }  // this record stays in the file for the next read
                let start = offset + Self.headerSize
                let element: Element
                do {
                    element = try configuration.decode(count) { buffer in
                        try readFully(buffer, from: read.descriptor, at: start)
                    }
                } catch let error as FileError {
                    throw error
                } catch {
                    throw FileError(code: .io, operation: .read, path: configuration.directory, cause: error)
                }
                offset = start + Int64(count)
                records.append(.init(element: element, weight: weight))
                bytes += weight
            }
            return (records, offset)
        }

        /// `pread(2)` until `buffer` is full, retried on `EINTR` and short reads.
        private func readFully(_ buffer: UnsafeMutableRawBufferPointer, from descriptor: FileDescriptor, at offset: Int64) throws(FileError) {
            var filled = 0
            while filled < buffer.count {
                let count = pread(descriptor.rawValue, buffer.baseAddress! + filled, buffer.count - filled, off_t(offset) + off_t(filled))
                if count > 0 {
                    filled += count
                    continue
                }
                if count == 0 {
                    throw .read(path: configuration.directory, errno: .ioError)
                }
                let error = Errno.current
                if error == .interrupted { continue }
                throw .read(path: configuration.directory, errno: error)
            }
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
            consumer?.resume(returning: PushBuffer.ConsumerWake.retry)
            return .spilled(demand)
        case .written(.terminate), .failed(.terminate):
            return .terminated(element)
        case .failed(.reject(let stopSource, let consumer)):
            consumer?.resume(returning: PushBuffer.ConsumerWake.retry)
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
        if rewind { writer.offset = 0 }
        let limit = spill.configuration.limit
        do throws(PushBuffer.Spill.WriteFailure) {
            let descriptor = try spill.append(element, weight: weight, to: &writer)
            return .written(machine.withLock { $0.spillWritten(weight: weight, descriptor: descriptor) })
        } catch {
            let failure: FileError? = switch error {
            case .limitReached: nil
            case .system(let error): error
            }
            return .failed(machine.withLock { $0.spillFailed(failure, spillLimit: limit) })
        }
    }

    /// Reads spilled records back on the spill's blocking-I/O thread, then lets the machine
    /// decide what the consumer returns.
    @usableFromInline
    func readBack(_ read: Machine.SpillRead) async -> Machine.NextAction {
        guard let spill else { preconditionFailure("spilled records without a spill policy") }
        do {
            let (records, endOffset) = try await withTaskExecutorPreference(spill.executor) { () async throws(FileError) in
                try spill.readRecords(read)
            }
            return machine.withLock { $0.spillRead(records, endOffset: endOffset) }
        } catch {
            if machine.withLock({ $0.spillReadFailed(error) }) { gate.cancel() }
            return .throwError(error)
        }
    }
}
