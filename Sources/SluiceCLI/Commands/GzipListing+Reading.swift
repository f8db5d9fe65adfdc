#if canImport(Glibc)
import Glibc
#endif
import Sluice

extension GzipListing {
    /// The row of `source` (`-` is standard input), decoded to its end; and the decoder's
    /// warnings (bytes after the last member). Blocks: runs on the listing's own thread.
    ///
    /// - Throws: ``FileError`` for `open`, `fstat`, `read` and a directory; ``GzipError`` for
    ///   data that is not gzip, is truncated, or whose trailer does not match its data.
    static func read(_ source: Pathname) async throws -> (Row, [StageWarning]) {
        let isStandardInput = source == "-"
        let descriptor = try isStandardInput ? Descriptor.standardInput : Descriptor.open(source, O_RDONLY)
        defer { if !isStandardInput { try? descriptor.close() } }
        let status: FileStatus
        do { status = try descriptor.status() } catch { throw FileError.fstat(path: source, errno: error) }
        if status.kind == .directory { throw FileError.isDirectory(.read, path: source) }
        let decoder = GzipDecoder()
        var compressed: Int64 = 0
        // The first bytes, until the first member's header is whole (its length is the ratio's).
        var start: [UInt8] = []
        var headerLength: Int?
        while true {
            var failure: ErrorNumber?
            let chunk = Chunk(capacity: 1 << 20) { bytes in
                do throws(ErrorNumber) { return try descriptor.read(into: bytes) } catch {
                    failure = error
                    return 0
                }
            }
            if let failure { throw FileError.read(path: source, errno: failure) }
            if chunk.count == 0 { break }
            compressed += Int64(chunk.count)
            if headerLength == nil && start.count < Self.longestMeasuredHeader {
                // A header is rarely longer than its first chunk; one whose name never ends is
                // measured no further (the decoder reports the file), so this stays linear.
                chunk.withUnsafeBytes { start += $0 }
                headerLength = Self.headerLength(of: start)
                if headerLength != nil { start = [] }
            }
            try await decoder.process(chunk) { _ in }
        }
        let summary = try await decoder.finish { _ in }
        guard let last = decoder.lastMember else { throw GzipError(.truncatedInput, offset: compressed) }
        let overhead = decoder.membersDecoded == 1 ? Int64(headerLength ?? 10) + 8 : 0
        let name = isStandardInput ? "-" : "\(GzipOptions.nameWithoutSuffix(source) ?? source)"
        let modified = status.kind == .regular && !isStandardInput ? Int(status.modificationTime.seconds) : 0
        let row = Row(
            compressed: compressed, uncompressed: last.size, overhead: overhead, name: name, crc32: last.crc32,
            modified: modified)
        return (row, summary.warnings)
    }

    /// The most bytes gathered to measure the first header (4 MiB): past that, the ratio counts
    /// a header of 10 bytes.
    static let longestMeasuredHeader = 4 << 20

    /// The length of the gzip header at the start of `bytes` (RFC 1952 §2.3.1: ID1, ID2, CM,
    /// FLG, MTIME, XFL, OS, then FEXTRA, FNAME, FCOMMENT and FHCRC as FLG says), or `nil` while
    /// `bytes` ends inside it. The decoder checks the header; this only measures it.
    static func headerLength(of bytes: [UInt8]) -> Int? {
        guard bytes.count >= 10 else { return nil }
        let flags = bytes[3]
        var length = 10
        if flags & 0x04 != 0 {  // FEXTRA: XLEN, little-endian, then XLEN bytes
            guard bytes.count >= length + 2 else { return nil }
            length += 2 + (Int(bytes[length + 1]) << 8 | Int(bytes[length]))
        }
        for flag: UInt8 in [0x08, 0x10] where flags & flag != 0 {  // FNAME, FCOMMENT: up to a NUL
            guard length < bytes.count, let end = bytes[length...].firstIndex(of: 0) else { return nil }
            length = end + 1
        }
        if flags & 0x02 != 0 { length += 2 }  // FHCRC
        return length <= bytes.count ? length : nil
    }
}
