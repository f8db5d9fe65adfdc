#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The reads and decodes behind ``GzipFileChunks``: a gzip file opened once, read with
/// `pread(2)` at the offsets its members' indexes give (<doc:IndexedGzip>), the uncompressed
/// bytes of a range produced in order.
///
/// Where the range starts is found by walking the members from the file's start: a member with
/// an index is passed over by its header, its table and its trailer's ISIZE, without reading its
/// deflate data; in the member that holds the range's first byte, only the segments the range
/// overlaps are read and decoded, each from its access point and checked against the index (its
/// length, its CRC-32, its end at an access point), then the member's trailer is checked against
/// the index (ISIZE, and the CRC-32 the segments make together); a member passed over has its
/// trailer checked the same way. A member without an index
/// (gzip's, pigz's, BGZF), and everything from a member whose index does not match what was read,
/// is decoded from that member's start by a ``GzipDecoder``, and the bytes before the range are
/// dropped; a member whose index did not match is decoded through its trailer, whose CRC-32 and
/// ISIZE are checked.
///
/// An index guards against damage, not against a forger: the compressed lengths of the segments
/// before the range are taken as they are, so a file crafted to hold one thing where its index
/// points and another in its deflate stream gives the first here and the second decoded in full.
///
/// Concurrency: `Sendable`; its reads run on ``executor``'s thread (the producing task
/// prefers it), and the descriptor is closed when the reader is released.
package final class GzipRangeReader: Sendable {
    let path: Pathname
    let descriptor: Descriptor
    /// The file's size when opened: the walk stops there.
    let size: Int64
    let range: Range<Int64>
    let chunkSize: Int
    let threadCount: Int
    let executor: BlockingIOExecutor
    /// Where decoding starts: the member that holds the range's first byte.
    let start: Start
    /// The warnings of the last iteration.
    let warnings = LockedValue<[StageWarning]>([])
    /// Called with each warning as it is met.
    let onWarning: @Sendable (StageWarning) -> Void

    /// A member reached by the walk: where it starts in the file and in the output, and how
    /// many members came before it.
    struct Member: Sendable {
        var input: Int64 = 0
        var output: Int64 = 0
        var number = 0

        /// Where the trailer of this member is, when its header of `headerLength` bytes holds
        /// `index`: after the header and the segments.
        func trailerOffset(headerLength: Int, _ index: GzipIndex) -> Int64 {
            input + Int64(headerLength) + index.compressedLength
        }

        /// The member after this one, when its header of `headerLength` bytes holds `index`.
        func next(headerLength: Int, _ index: GzipIndex) -> Member {
            Member(input: trailerOffset(headerLength: headerLength, index) + 8, output: output + index.totalSize, number: number + 1)
        }
    }

    /// Where decoding starts.
    enum Start: Sendable {
        /// At the segments of an indexed member whose header is `headerLength` bytes.
        case indexed(Member, GzipIndex, headerLength: Int)
        /// From the start of a member without an index; `mismatch` says why an index there was
        /// not followed (it does not match its trailer), and the member is then decoded
        /// through its trailer.
        case sequential(Member, mismatch: StageWarning?)
        /// What follows the last member is not a gzip member (trailing garbage, which the
        /// decoder reports as a warning).
        case trailing(Member)
        /// Past the end of the file's data: nothing to produce.
        case end
    }

    /// Opens `path` and walks to the member that holds `range.lowerBound`; on the calling thread.
    ///
    /// - Throws: ``FileError`` (`open`, `fstat`, `read`; `isDirectory`; `unsupported` for a
    ///   FIFO, a socket or a device, which cannot be read at offsets); ``GzipError`` with
    ///   ``GzipError/Kind/notGzip`` when the file does not start with a gzip member.
    init(
        path: Pathname, range: Range<Int64>, chunkSize: Int, threadCount: Int, executor: BlockingIOExecutor,
        onWarning: @escaping @Sendable (StageWarning) -> Void = { _ in }
    ) throws {
        precondition(range.lowerBound >= 0 && chunkSize > 0 && threadCount >= 1, "invalid range reader parameters")
        // Without waiting for a FIFO's writer: the kind of file is checked first.
        let descriptor = try Descriptor.open(path, O_RDONLY | O_NONBLOCK)
        let (size, start): (Int64, Start)
        do {
            let status: FileStatus
            do { status = try descriptor.status() } catch { throw FileError.fstat(path: path, errno: error) }
            if status.kind == .directory { throw FileError.isDirectory(.read, path: path) }
            if status.kind != .regular { throw FileError.notRegular(path, reason: "a range is read at offsets") }
            let magic = try Self.read(descriptor, path: path, count: 2, at: 0)
            guard magic.bytes == [0x1F, 0x8B] else { throw GzipError(.notGzip, offset: 0) }
            (size, start) = (status.size, try Self.walk(descriptor, path: path, size: status.size, to: range.lowerBound, from: Member()))
        } catch {
            try? descriptor.close()
            throw error
        }
        // Owned from here: ``deinit`` closes it.
        (self.descriptor, self.path, self.size, self.range, self.start) = (descriptor, path, size, range, start)
        (self.chunkSize, self.threadCount, self.executor, self.onWarning) = (chunkSize, threadCount, executor, onWarning)
    }

    deinit {
        try? descriptor.close()
    }

    /// The member of `descriptor`'s file that holds output byte `offset`, from `member` on:
    /// indexed members before it are passed over by their tables.
    static func walk(_ descriptor: Descriptor, path: Pathname, size: Int64, to offset: Int64, from member: Member) throws -> Start {
        var member = member
        while member.input < size {
            let (headerLength, index): (Int, GzipIndex)
            switch try header(descriptor, path: path, at: member.input) {
            case .indexed(let length, let found): (headerLength, index) = (length, found)
            case .member(let damage):
                let mismatch = damage.map {
                    StageWarning("member \(member.number + 1): its index does not match its data (\($0)): decoded from the member's start")
                }
                return .sequential(member, mismatch: mismatch)
            case .other: return member.number == 0 ? .sequential(member, mismatch: nil) : .trailing(member)
            }
            let (end, overflow) = member.output.addingReportingOverflow(index.totalSize)
            if overflow { return .sequential(member, mismatch: nil) }
            // The member that holds the range's start has its trailer checked after its segments.
            if offset < end { return .indexed(member, index, headerLength: headerLength) }
            if let mismatch = try checkTrailer(descriptor, path: path, of: member, headerLength: headerLength, index) {
                return .sequential(member, mismatch: mismatch)
            }
            member = member.next(headerLength: headerLength, index)
        }
        return .end
    }

    /// What starts at an offset of the file.
    enum Header {
        /// A member's header of `length` bytes with an index a decoder may follow
        /// (``GzipIndex/isUsable``).
        case indexed(length: Int, GzipIndex)
        /// A member without such an index (or with a header left to the sequential decoder), and
        /// why an index it holds cannot be right (``GzipIndex/damage``), if it does.
        case member(indexDamage: String?)
        /// Not a gzip member (ID1 ID2 are not 1f 8b), or the end of the file.
        case other
    }

    /// What starts at `offset`.
    static func header(_ descriptor: Descriptor, path: Pathname, at offset: Int64) throws -> Header {
        var bytes: [UInt8] = []
        while true {
            let parsed = ParallelGzipDecoder.parseHeader(bytes)
            switch parsed {
            case .incomplete(let needed):
                // What the header needs and no more: the deflate data after it is not the range's.
                let more = try read(descriptor, path: path, count: needed, at: offset + Int64(bytes.count))
                if more.count == 0 { return bytes.starts(with: [0x1F, 0x8B]) ? .member(indexDamage: nil) : .other }
                bytes += more.bytes
            case .parsed(let length, let index?, _, _) where index.isUsable:
                return .indexed(length: length, index)
            case .parsed, .other:
                return bytes.starts(with: [0x1F, 0x8B]) ? .member(indexDamage: parsed.indexDamage) : .other
            }
        }
    }

    /// The warning that says `member`'s trailer does not say what its index says
    /// (``GzipIndex/matches(trailer:)``); `nil` when it does.
    static func checkTrailer(
        _ descriptor: Descriptor, path: Pathname, of member: Member, headerLength: Int, _ index: GzipIndex
    ) throws -> StageWarning? {
        let trailer = try read(descriptor, path: path, count: 8, at: member.trailerOffset(headerLength: headerLength, index))
        if index.matches(trailer: trailer.bytes) { return nil }
        let what = trailer.count < 8 ? "ends past the end of the file" : "does not match the member's trailer"
        return StageWarning("member \(member.number + 1): its index \(what): decoded from the member's start")
    }

    /// Up to `count` bytes at `offset` (fewer only at the end of the file), by `pread(2)`.
    static func read(_ descriptor: Descriptor, path: Pathname, count: Int, at offset: Int64) throws(FileError) -> Chunk {
        try Chunk(allocating: count) { (buffer: UnsafeMutableRawBufferPointer) throws(FileError) -> Int in
            var filled = 0
            while filled < count {
                let step: Int
                do throws(ErrorNumber) {
                    step = try descriptor.read(
                        fromAbsoluteOffset: offset + Int64(filled), into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                } catch {
                    throw .read(path: path, errno: error)
                }
                if step == 0 { break }
                filled += step
            }
            return filled
        }
    }

    func read(count: Int, at offset: Int64) throws(FileError) -> Chunk {
        try Self.read(descriptor, path: path, count: count, at: offset)
    }

    // MARK: Producing

    /// Whether the range's start is found through indexes: `false` when it is in or after a
    /// member without one (gzip's, pigz's, BGZF), which is then decoded from its start.
    var isIndexed: Bool {
        if case .sequential(_, mismatch: nil) = start { false } else { true }
    }

    /// Produces the range's bytes in order, through `emit`, from ``start``: each call anew.
    ///
    /// - Throws: what reading and decoding throw; `CancellationError` when the task is
    ///   cancelled (looked at before each read).
    func produce(emit: @escaping (Chunk) async throws -> Void) async throws {
        warnings.withLock { $0 = [] }
        var output = RangeOutput(range: range, emit: emit)
        var start = self.start
        while !output.isComplete {
            switch start {
            case .end:
                return
            case .sequential(let member, let mismatch):
                if let mismatch { report(mismatch) }
                try await decodeSequentially(from: member, checkingThrough: mismatch == nil ? nil : member.number, into: &output)
                return
            case .trailing(let member):
                try await decodeSequentially(from: member, checkingThrough: nil, into: &output)
                return
            case .indexed(let member, let index, let headerLength):
                if let failure = try await decodeSegments(of: member, index, headerLength: headerLength, into: &output) {
                    report(failure)
                    try await decodeSequentially(from: member, checkingThrough: member.number, into: &output)
                    return
                }
                // The range is out: nothing after this member is read.
                if output.isComplete { return }
                let next = member.next(headerLength: headerLength, index)
                start = try Self.walk(descriptor, path: path, size: size, to: next.output, from: next)
            }
        }
    }

    private func report(_ warning: StageWarning) {
        warnings.withLock { $0.append(warning) }
        onWarning(warning)
    }

    /// Decodes the segments of `member` that the range overlaps, each checked against `index`,
    /// a few more than ``threadCount`` of them in memory at once, then checks the member's trailer
    /// against `index`.
    ///
    /// - Returns: the warning that says which segment, or that the trailer, did not match;
    ///   `nil` if all did.
    private func decodeSegments(
        of member: Member, _ index: GzipIndex, headerLength: Int, into output: inout RangeOutput
    ) async throws -> StageWarning? {
        let first = Int((max(range.lowerBound, member.output) - member.output) / index.segmentSize)
        let last = Int((min(range.upperBound, member.output + index.totalSize) - 1 - member.output) / index.segmentSize)
        let pieces = SegmentDecoding(threadCount: min(threadCount, last - first + 1), chunkSize: chunkSize)
        let mismatch: StageWarning?
        do {
            let warning = try await decodeSegments(
                first...last, of: member, index, headerLength: headerLength, through: pieces, into: &output)
            await pieces.close()
            if let warning { return warning }
            mismatch = try Self.checkTrailer(descriptor, path: path, of: member, headerLength: headerLength, index)
        } catch {
            await pieces.close()
            throw error
        }
        guard let mismatch else { return nil }
        // A field of a segment the range did not need: the others are checked, to name it.
        for numbers in [0..<first, last + 1..<index.segments.count] {
            if let warning = try await firstMismatch(in: numbers, of: member, index, headerLength: headerLength) { return warning }
        }
        return mismatch
    }

    /// The warning naming the first of segments `numbers` of `member` that does not match
    /// `index`, each decoded and checked through stages of their own, its output dropped; `nil`
    /// when all match.
    private func firstMismatch(
        in numbers: Range<Int>, of member: Member, _ index: GzipIndex, headerLength: Int
    ) async throws -> StageWarning? {
        guard !numbers.isEmpty else { return nil }
        let pieces = SegmentDecoding(threadCount: min(threadCount, numbers.count), chunkSize: chunkSize)
        var dropped = RangeOutput(range: 0..<0) { _ in }
        do {
            let warning = try await decodeSegments(
                numbers.lowerBound...numbers.upperBound - 1, of: member, index, headerLength: headerLength, through: pieces,
                into: &dropped)
            await pieces.close()
            return warning
        } catch {
            await pieces.close()
            throw error
        }
    }

    /// Decodes the segments `numbers` of `member` through `pieces`.
    private func decodeSegments(
        _ numbers: ClosedRange<Int>, of member: Member, _ index: GzipIndex, headerLength: Int, through pieces: SegmentDecoding,
        into output: inout RangeOutput
    ) async throws -> StageWarning? {
        var offset = member.input + Int64(headerLength)
        for number in 0..<numbers.lowerBound { offset += Int64(index.segments[number].compressedLength) }
        for number in numbers {
            try Task.checkCancellation()
            let length = Int(index.segments[number].compressedLength)
            let piece = ParallelGzipDecoder.Piece.segment(number, of: index, data: try read(count: length, at: offset))
            offset += Int64(length)
            for decoded in try await pieces.submit(piece) {
                if let warning = try await write(decoded, of: member, index, into: &output) { return warning }
            }
        }
        for decoded in try await pieces.finish() {
            if let warning = try await write(decoded, of: member, index, into: &output) { return warning }
        }
        return nil
    }

    /// Writes a decoded segment's output, or returns the warning that says it does not match.
    private func write(
        _ decoded: ParallelGzipDecoder.Decoded, of member: Member, _ index: GzipIndex, into output: inout RangeOutput
    ) async throws -> StageWarning? {
        if let failure = decoded.failure {
            return StageWarning(
                "member \(member.number + 1), segment \(decoded.piece.number + 1) does not match its index (\(failure)): "
                    + "decoded from the member's start")
        }
        try await output.write(decoded.output, at: member.output + Int64(decoded.piece.number) * index.segmentSize)
        return nil
    }

    /// Decodes from `member`'s start to the range's end (or the file's), the members after it
    /// too, with a ``GzipDecoder`` and all its checks (the trailers' CRC-32 and ISIZE among
    /// them): what is before the range, or already out, is dropped.
    ///
    /// - Parameter checkedMember: the number of a member decoded at least through its
    ///   trailer, so that its CRC-32 and ISIZE are checked even when the range ends before.
    private func decodeSequentially(
        from member: Member, checkingThrough checkedMember: Int?, into output: inout RangeOutput
    ) async throws {
        let decoder = GzipDecoder(outputChunkSize: chunkSize, outputLimit: nil, allocator: nil)
        decoder.resume(afterMembers: member.number, input: member.input, output: member.output, crc32: 0, lastMember: nil)
        output.position = member.output
        var offset = member.input
        // Whether the range is out and nothing is left to check.
        func isDone(_ output: RangeOutput) -> Bool {
            output.isComplete && decoder.membersDecoded > (checkedMember ?? -1)
        }
        do {
            while !isDone(output) {
                try Task.checkCancellation()
                let input = try read(count: Self.sequentialReadSize, at: offset)
                if input.count == 0 { break }
                offset += Int64(input.count)
                try await decoder.process(input) { chunk in
                    try await output.write(chunk)
                    if checkedMember == nil && output.isComplete { throw RangeOutput.Complete() }
                }
            }
            if isDone(output) { return }
            let summary = try await decoder.finish { chunk in try await output.write(chunk) }
            summary.warnings.forEach(report)
        } catch is RangeOutput.Complete {
            // The range's last byte is out: the rest of the file is not read.
        } catch where isDone(output) {
            // Past the range and the checked member, in what the last read took of the member
            // after it: not the range's.
        }
    }

    /// The compressed bytes read at a time when decoding from a member's start: at most 64 MiB
    /// of output each (deflate's largest ratio is about 1,032:1), handed out a chunk at a time.
    static let sequentialReadSize = 64 << 10
}

/// Segments decoded in order: on the calling thread for one thread, on an
/// ``OrderedParallelStage`` of `threadCount` workers (as many segments in flight as
/// ``ParallelGzipDecoder/maximumInFlight(threadCount:)`` says) for more.
struct SegmentDecoding {
    typealias Piece = ParallelGzipDecoder.Piece
    typealias Decoded = ParallelGzipDecoder.Decoded

    private let inflater: ParallelGzipDecoder.Inflater?
    private let stage: OrderedParallelStage<Piece, Decoded>?

    init(threadCount: Int, chunkSize: Int) {
        if threadCount <= 1 {
            (inflater, stage) = (ParallelGzipDecoder.Inflater(outputChunkSize: chunkSize), nil)
        } else {
            inflater = nil
            stage = OrderedParallelStage(
                workerCount: threadCount, maximumInFlight: ParallelGzipDecoder.maximumInFlight(threadCount: threadCount),
                label: "sluice.inflate",
                makeWorker: {
                    let inflater = ParallelGzipDecoder.Inflater(outputChunkSize: chunkSize)
                    return { piece in try inflater.decode(piece) }
                })
        }
    }

    /// Submits `piece`; returns the segments decoded meanwhile (all of them on one thread).
    func submit(_ piece: Piece) async throws -> [Decoded] {
        guard let stage else { return [try inflater!.decode(piece)] }
        var done: [Decoded] = []
        // One task submits and consumes: it takes a result first while the stage is full.
        while stage.isFull, let decoded = try await stage.next() { done.append(decoded) }
        try await stage.submit(piece)
        while let decoded = try stage.nextIfReady() { done.append(decoded) }
        return done
    }

    /// The segments still in flight, in order.
    func finish() async throws -> [Decoded] {
        guard let stage else { return [] }
        stage.finish()
        var done: [Decoded] = []
        while let decoded = try await stage.next() { done.append(decoded) }
        return done
    }

    /// Stops the workers (what they decode is dropped) and waits until none runs.
    func close() async {
        await stage?.close()
    }
}
