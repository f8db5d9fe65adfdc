/// The spill store of ``PushBuffer/OverflowPolicy/spill(directory:limit:)``: a ``RecordFile``
/// created in a directory at the first append, unlinked at once, closed by ``close()``.
///
/// Positions are byte offsets in the file; each record's weight is the file record's tag. Reads
/// take the lock only to copy the file's handle, never during a read or a write, so the consumer
/// reading earlier records and a producer appending do not wait for each other. Its errors are
/// ``FileError``s whose path is the directory.
final class FileSpillStore: SpillStore {
    private struct State {
        /// The file, once created.
        var file: RecordFile?
        /// Closed: never created again.
        var isClosed = false
    }

    /// Where the file is created.
    let directory: Pathname
    private let state = LockedValue(State())

    /// Creates a store whose file will be created in `directory` at the first append.
    init(directory: Pathname) {
        self.directory = directory
    }

    /// Appends a record (the file is created first, at the first append).
    ///
    /// - Throws: ``FileError``: `create` when the file cannot be created, `write` when the write
    ///   fails.
    func append(_ bytes: UnsafeRawBufferPointer, weight: Int) throws(FileError) {
        var file = try state.withLock { (state) throws(FileError) -> RecordFile in
            if let file = state.file { return file }
            precondition(!state.isClosed, "a spill store was written after it was closed")
            let file = try RecordFile.createUnlinked(in: directory, prefix: ".sluice-spill-")
            state.file = file
            return file
        }
        // Appends come one at a time (see SpillStore): the write needs no lock.
        try file.append(bytes, tag: UInt64(weight))
        state.withLock { $0.file = file }
    }

    /// - Throws: ``FileError`` (`read`) when the header cannot be read.
    func record(at position: Int64) throws(FileError) -> SpillRecord {
        let header = try file().header(at: position)
        return SpillRecord(
            position: position, byteCount: header.byteCount, weight: Int(truncatingIfNeeded: header.tag),
            nextPosition: header.endOffset)
    }

    /// - Throws: ``FileError`` (`read`) when the bytes cannot be read.
    func read(_ record: SpillRecord, into buffer: UnsafeMutableRawBufferPointer) throws(FileError) {
        let header = RecordFile.Header(
            offset: record.position, byteCount: record.byteCount, tag: UInt64(truncatingIfNeeded: record.weight))
        try file().read(header, into: buffer)
    }

    /// Rewinds the file: the next record is written at offset 0, over the old ones.
    func reset() {
        state.withLock { $0.file?.rewind() }
    }

    /// Closes the file, releasing its space.
    func close() {
        let file = state.withLock { state -> RecordFile? in
            state.isClosed = true
            defer { state.file = nil }
            return state.file
        }
        file?.close()
    }

    /// The file records are read from; it exists, since a record was appended.
    private func file() -> RecordFile {
        guard let file = state.withLock({ $0.file }) else {
            preconditionFailure("a spill store was read before anything was appended")
        }
        return file
    }
}
