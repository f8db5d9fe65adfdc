#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A scratch file of length-prefixed records that has no name: it is created in a directory and
/// unlinked at once, so it lives only as long as its descriptor and a crash leaves nothing behind.
///
/// Each record is a 16-byte header (the payload's length, then a 64-bit tag the caller chooses,
/// both little-endian) followed by the payload. ``append(_:tag:)`` writes a record at
/// ``endOffset`` with `pwrite(2)`; ``header(at:)`` and ``read(_:into:)`` read one back from any
/// offset with `pread(2)`, so records already appended can be read on one thread while another
/// thread appends. ``rewind()`` starts again at offset 0: the space is reused, not released.
/// ``close()`` releases it.
///
/// A plain value, as ``Descriptor`` is: it does not close itself, and whoever creates it
/// calls ``close()`` exactly once. Every failure is a ``FileError`` whose path is the directory
/// (the file has no name of its own). The calls block for a regular-file read or write: run them
/// off Swift's cooperative pool when that matters (``BlockingIOExecutor``).
struct RecordFile: Sendable {
    /// Where a record is and what its header says.
    struct Header: Sendable, Hashable {
        /// The offset of the record's header, in bytes from the start of the file.
        var offset: Int64
        /// The payload's length in bytes.
        var byteCount: Int
        /// The tag given to ``RecordFile/append(_:tag:)``.
        var tag: UInt64

        /// The offset of the payload.
        var payloadOffset: Int64 { offset + RecordFile.headerSize }

        /// The offset just past the payload: where the next record starts.
        var endOffset: Int64 { payloadOffset + Int64(byteCount) }
    }

    /// The size of a record's header in bytes: the payload's length and the tag, 8 bytes each.
    static var headerSize: Int64 { 16 }

    /// The open, unlinked file.
    let descriptor: Descriptor
    /// The directory the file was created in; the path of every error.
    let directory: Pathname
    /// Where the next record goes, in bytes from the start of the file.
    private(set) var endOffset: Int64 = 0

    private init(descriptor: Descriptor, directory: Pathname) {
        self.descriptor = descriptor
        self.directory = directory
    }

    /// Creates `<prefix><random>.tmp` in `directory` with `O_CREAT | O_EXCL` and mode 0600 (see
    /// ``Descriptor/createUnique(in:prefix:flags:permissions:system:)``), then unlinks it at
    /// once, so its name never outlives this call. A failed unlink is not reported: the file still
    /// works, and its name stays behind as any abandoned temporary file's would.
    ///
    /// - Parameters:
    ///   - directory: where the file is created; it must be writable.
    ///   - prefix: the start of the short-lived name.
    /// - Throws: ``FileError`` (operation `create`, the directory's path, the error of the file
    ///   tried as its cause) when the file cannot be created.
    static func createUnlinked(in directory: Pathname, prefix: String) throws(FileError) -> RecordFile {
        let descriptor: Descriptor
        do throws(FileError) {
            let (created, path) = try Descriptor.createUnique(
                in: directory, prefix: prefix, flags: O_RDWR, permissions: 0o600)
            _ = path.withCString { unlink($0) }
            descriptor = created
        } catch {
            throw .create(path: directory, errno: error.errno ?? .ioError, cause: error)
        }
        return RecordFile(descriptor: descriptor, directory: directory)
    }

    /// Appends one record, `bytes` with `tag`, at ``endOffset`` and moves ``endOffset`` past it.
    ///
    /// - Throws: ``FileError`` (operation `write`) when `pwrite(2)` fails; ``endOffset`` does not
    ///   move, and the next append overwrites what was partly written.
    mutating func append(_ bytes: UnsafeRawBufferPointer, tag: UInt64) throws(FileError) {
        var header = (UInt64(bytes.count).littleEndian, tag.littleEndian)
        let start = endOffset
        do throws(ErrorNumber) {
            try withUnsafeBytes(of: &header) { (header) throws(ErrorNumber) in
                try descriptor.write(toAbsoluteOffset: start, header)
            }
            try descriptor.write(toAbsoluteOffset: start + Self.headerSize, bytes)
        } catch {
            throw .write(path: directory, errno: error)
        }
        endOffset = start + Self.headerSize + Int64(bytes.count)
    }

    /// Reads the header of the record that starts at `offset`.
    ///
    /// - Parameter offset: the start of a record: 0, or the ``Header/endOffset`` of an earlier one.
    /// - Throws: ``FileError`` (operation `read`) when `pread(2)` fails or the file ends first
    ///   (`EIO`).
    func header(at offset: Int64) throws(FileError) -> Header {
        var raw = (UInt64(0), UInt64(0))
        try withUnsafeMutableBytes(of: &raw) { (buffer) throws(FileError) in
            try readFully(buffer, at: offset)
        }
        return Header(
            offset: offset, byteCount: Int(UInt64(littleEndian: raw.0)), tag: UInt64(littleEndian: raw.1))
    }

    /// Reads the payload of the record `header` describes into `buffer`.
    ///
    /// - Parameter buffer: exactly `header.byteCount` bytes.
    /// - Throws: ``FileError`` (operation `read`) when `pread(2)` fails or the file ends first
    ///   (`EIO`).
    func read(_ header: Header, into buffer: UnsafeMutableRawBufferPointer) throws(FileError) {
        precondition(buffer.count == header.byteCount, "a record's payload is read whole")
        try readFully(buffer, at: header.payloadOffset)
    }

    /// Forgets every record: the next one is written at offset 0. The file keeps its size.
    mutating func rewind() {
        endOffset = 0
    }

    /// Closes the descriptor, releasing the file's space. A close error is ignored: nothing was
    /// left to keep.
    func close() {
        try? descriptor.close()
    }

    /// `pread(2)` until `buffer` is full: the one loop over short reads of this file.
    private func readFully(_ buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(FileError) {
        var filled = 0
        while filled < buffer.count {
            let count: Int
            do throws(ErrorNumber) {
                count = try descriptor.read(
                    fromAbsoluteOffset: offset + Int64(filled),
                    into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            } catch {
                throw .read(path: directory, errno: error)
            }
            // The file ended inside a record: it was cut short under us.
            guard count > 0 else { throw .read(path: directory, errno: .ioError) }
            filled += count
        }
    }
}
