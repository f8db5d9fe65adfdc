#if canImport(Glibc)
import Glibc
#endif
import Sluice

extension GzipListing {
    /// The row of `source` (`-` is standard input): its first member's header and its last
    /// 8 bytes, nothing decoded.
    ///
    /// - Throws: ``FileError`` for `open`, `fstat`, `read` and a directory; ``GzipError`` for
    ///   data that is not gzip (``GzipError/Kind/notGzip``, ``GzipError/Kind/unknownMethod(_:)``,
    ///   reserved header flags as ``GzipError/Kind/corruptData``) or that ends before a header
    ///   and a trailer (``GzipError/Kind/truncatedInput``).
    static func read(_ source: FilePath) throws -> Row {
        let isStandardInput = source == "-"
        let descriptor = try isStandardInput ? FileDescriptor.standardInput : FileDescriptor.open(source, O_RDONLY)
        defer { if !isStandardInput { try? descriptor.close() } }
        let status: FileStatus
        do { status = try descriptor.status() } catch { throw FileError.fstat(path: source, errno: error) }
        if status.kind == .directory { throw FileError.isDirectory(.read, path: source) }
        var input = SequentialInput(descriptor: descriptor, path: source)
        let overhead = try headerLength(of: &input) + 8
        let (compressed, trailer): (Int64, [UInt8])
        if status.kind == .regular && !isStandardInput {
            // As gzip -l: the size the file system gives, and the trailer where it says it ends.
            compressed = status.size
            trailer = try compressed >= overhead ? readTrailer(of: descriptor, endingAt: compressed, path: source) : []
        } else {
            (compressed, trailer) = try input.readToEnd()
        }
        guard compressed >= overhead, trailer.count == 8 else { throw GzipError(.truncatedInput, offset: compressed) }
        let isize = trailer[4...].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let name = isStandardInput ? "-" : "\(GzipOptions.nameWithoutSuffix(source) ?? source)"
        return Row(compressed: compressed, uncompressed: Int64(isize), overhead: overhead, name: name)
    }

    /// The length of the header at the start of `input` (RFC 1952 §2.3.1: ID1, ID2, CM, FLG,
    /// MTIME, XFL, OS, then FEXTRA, FNAME, FCOMMENT and FHCRC as FLG says).
    ///
    /// - Throws: ``GzipError`` (not gzip, a method other than 8, reserved flags, the end of the
    ///   input inside the header), or ``FileError`` of a read.
    private static func headerLength(of input: inout SequentialInput) throws -> Int64 {
        func byte() throws -> UInt8 {
            guard let byte = try input.next() else { throw GzipError(.truncatedInput, offset: input.offset) }
            return byte
        }
        guard let first = try input.next() else { throw GzipError(.truncatedInput, offset: 0) }
        guard first == 0x1F, try input.next().map({ $0 == 0x8B }) ?? true else { throw GzipError(.notGzip, offset: 0) }
        let method = try byte()
        guard method == 8 else { throw GzipError(.unknownMethod(method), offset: 2) }
        let flags = try byte()
        guard flags & 0xE0 == 0 else {
            throw GzipError(.corruptData, offset: 3, zlibMessage: "unknown header flags set")
        }
        for _ in 0..<6 { _ = try byte() }  // MTIME, XFL, OS
        if flags & 0x04 != 0 {  // FEXTRA: XLEN, little-endian, then XLEN bytes
            let low = try byte()
            let high = try byte()
            for _ in 0..<(Int(high) << 8 | Int(low)) { _ = try byte() }
        }
        for flag: UInt8 in [0x08, 0x10] where flags & flag != 0 {  // FNAME, FCOMMENT: up to a NUL
            while try byte() != 0 {}
        }
        if flags & 0x02 != 0 {  // FHCRC
            _ = try byte()
            _ = try byte()
        }
        return input.offset
    }

    /// The 8 bytes before `end` (`pread(2)`); fewer if the file is shorter than it said.
    private static func readTrailer(of descriptor: FileDescriptor, endingAt end: Int64, path: FilePath) throws(FileError) -> [UInt8] {
        var trailer = [UInt8](repeating: 0, count: 8)
        let result = trailer.withUnsafeMutableBytes { buffer in
            Result { () throws(Errno) in try descriptor.read(fromAbsoluteOffset: end - 8, into: buffer) }
        }
        switch result {
        case .success(let count): return Array(trailer[..<count])
        case .failure(let error): throw FileError.read(path: path, errno: error)
        }
    }
}

/// A descriptor read from its current offset, a byte at a time for a header, then to its end
/// counting the bytes and keeping the last 8.
private struct SequentialInput {
    let descriptor: FileDescriptor
    let path: FilePath
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)
    private var count = 0
    private var position = 0
    /// The bytes ``next()`` has returned.
    private(set) var offset: Int64 = 0
    /// The bytes read from the descriptor.
    private var total: Int64 = 0
    /// The last (up to) 8 bytes read from the descriptor.
    private var recent: [UInt8] = []

    init(descriptor: FileDescriptor, path: FilePath) {
        self.descriptor = descriptor
        self.path = path
    }

    /// The next byte, or `nil` at the end of the input.
    mutating func next() throws(FileError) -> UInt8? {
        if position == count {
            guard try refill() else { return nil }
        }
        defer {
            position += 1
            offset += 1
        }
        return buffer[position]
    }

    /// Reads the rest of the input.
    ///
    /// - Returns: the bytes the input held in all, and its last 8 (fewer if it is shorter).
    mutating func readToEnd() throws(FileError) -> (count: Int64, last: [UInt8]) {
        while try refill() {}
        return (total, recent)
    }

    private mutating func refill() throws(FileError) -> Bool {
        let descriptor = descriptor
        let result = buffer.withUnsafeMutableBytes { bytes in
            Result { () throws(Errno) in try descriptor.read(into: bytes) }
        }
        switch result {
        case .success(let read):
            (count, position) = (read, 0)
            total += Int64(read)
            recent = Array((recent + buffer[max(0, read - 8)..<read]).suffix(8))
            return read > 0
        case .failure(let error):
            throw FileError.read(path: path, errno: error)
        }
    }
}
