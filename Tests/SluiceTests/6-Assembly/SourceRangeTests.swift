import Testing
@testable import Sluice
import SluiceTestSupport

/// Every path through one sink interface: a copy that the kernel makes sends ranges of the
/// source down the pipeline (``SourceRanges``), which a ``FileSink`` copies inside the kernel and
/// any other sink receives as bytes, read for it by the pipeline.
@Suite(.timeLimit(.minutes(3)))
struct SourceRangeTests {
    static let size: Int64 = 5 << 20
    static let extents: [(offset: Int64, bytes: [UInt8])] = [
        (0, randomBytes(count: 100_000, seed: 31)),
        (2 << 20, randomBytes(count: (1 << 20) + 5000, seed: 32)),
    ]

    /// The ranges and holes of a sparse file, in order: they cover it exactly, each range holds
    /// at most a slice of data (with the holes between its extents inside it, not a chunk
    /// each), and the file ends in a hole (no range to the end of file).
    @Test func aSparseFilesRangesCoverItInOrder() async throws {
        try await withScratchDirectory { directory in
            let path = directory.appending("source")
            try writeSparseFile(path, size: Self.size, extents: Self.extents)
            let file = try await FileChunks.open(path)
            var offset: Int64 = 0
            var (ranges, data, holes) = (0, Int64(0), 0)
            for try await chunk in SourceRanges(of: file, method: .kernelCopy, sliceSize: 1 << 19, findsHoles: true) {
                if let range = chunk.sourceRange {
                    #expect(range.method == .kernelCopy)
                    #expect(range.offset == offset)
                    let pieces = range.data(count: chunk.count)
                    #expect(pieces.first!.lowerBound >= offset && pieces.last!.upperBound == offset + Int64(chunk.count))
                    #expect(zip(pieces, pieces.dropFirst()).allSatisfy { $0.upperBound < $1.lowerBound })
                    let bytes = pieces.reduce(0) { $0 + $1.count }
                    #expect(bytes <= 1 << 19)
                    data += Int64(bytes)
                    ranges += 1
                } else {
                    #expect(chunk.isHole)
                    holes += 1
                }
                offset += Int64(chunk.count)
            }
            #expect(offset == Self.size)
            // The data, whole blocks around each extent: 100,000 bytes and 1 MiB + 5,000.
            #expect(data >= 100_000 + (1 << 20) + 5000 && data < 1_300_000)
            // 1.1 MiB of data in slices of 512 KiB: three ranges, the first with a hole inside.
            #expect(ranges == 3)
            #expect(holes >= 1, "the hole at the end")
        }
    }

    /// A dense file: slices, then one range on to the end of file; a clone: one range.
    @Test func aDenseFileEndsWithARangeToItsEndAndACloneIsOneRange() async throws {
        try await withScratchDirectory { directory in
            let path = directory.appending("source")
            try writeFile(path, randomBytes(count: 300_000, seed: 33))
            let file = try await FileChunks.open(path)
            var methods: [Chunk.SourceRange.Method] = []
            for try await chunk in SourceRanges(of: file, method: .kernelCopy, sliceSize: 128 << 10, findsHoles: true) {
                methods.append(try #require(chunk.sourceRange).method)
            }
            #expect(methods == [.kernelCopy, .kernelCopy, .kernelCopy, .kernelCopyToEnd])
            let again = try await FileChunks.open(path)
            var clones: [Int] = []
            for try await chunk in SourceRanges(of: again, method: .clone, sliceSize: 128 << 10, findsHoles: true) {
                #expect(chunk.sourceRange?.method == .clone)
                clones.append(chunk.count)
            }
            #expect(clones == [300_000])
        }
    }

    /// A sink that does not copy ranges gets the bytes: the pipeline reads each range for it,
    /// counts them in progress and in the CRC-32, and the sink is committed.
    @Test(arguments: [Chunk.SourceRange.Method.kernelCopy, .clone])
    func aSinkThatDoesNotCopyRangesGetsTheirBytes(method: Chunk.SourceRange.Method) async throws {
        try await withScratchDirectory { directory in
            let path = directory.appending("source")
            try writeSparseFile(path, size: Self.size, extents: Self.extents)
            let content = sparseContent(size: Self.size, extents: Self.extents)
            let file = try await FileChunks.open(path)
            let sink = CopierJobTests.MemorySink()
            let copy = Pipeline(
                ranges: SourceRanges(of: file, method: method, sliceSize: 1 << 20, findsHoles: true), to: sink,
                options: .init(), progress: ProgressHub())
            let updates = copy.progress.subscribe()
            let seen = Task { await updates.reduce(into: [ProgressSnapshot]()) { $0.append($1) } }
            let report = try await copy.run()
            #expect(await sink.bytes == content)
            #expect(await sink.ending == .committed)
            #expect(report.bytesRead == Self.size && report.bytesWritten == Self.size)
            #expect(report.crc32 == CRC32(content).value)
            let last = try #require(await seen.value.last)
            #expect(last.isFinal && last.bytesCompleted == Self.size)
        }
    }

    /// A file sink copies the same ranges in the kernel: the same bytes, the same holes, and
    /// progress that counts what the kernel copied.
    @Test func aFileSinkCopiesTheRangesInTheKernel() async throws {
        try await withScratchDirectory { directory in
            let path = directory.appending("source")
            let destination = directory.appending("copy")
            try writeSparseFile(path, size: Self.size, extents: Self.extents)
            let file = try await FileChunks.open(path)
            let sink = try await FileSink.create(at: destination, source: file, options: .init(synchronizes: false))
            let copy = Pipeline(
                ranges: SourceRanges(of: file, method: .kernelCopy, sliceSize: 1 << 20, findsHoles: true), to: sink,
                options: .init(), progress: ProgressHub())
            let report = try await copy.run()
            #expect(try readFile(destination) == sparseContent(size: Self.size, extents: Self.extents))
            #expect(try FileStatus.of(destination).size == Self.size)
            #expect(report.bytesRead == Self.size && report.bytesWritten == Self.size)
            #expect(report.crc32 == nil, "the data never passed through Sluice")
            #expect(try allocatedBytes(destination) < Self.size / 2)
        }
    }

    /// A range stands for bytes it does not hold: a clone of a 1 PiB file maps nothing and
    /// weighs nothing in a channel (it once mapped as many zeros as the file's size).
    @Test func aRangeOfAPetabyteHoldsNoMemory() throws {
        let range = Chunk.SourceRange(descriptor: Descriptor(rawValue: 0), offset: 0, method: .clone)
        let chunk = Chunk.sourceRange(range, count: 1 << 50)
        #expect(chunk.count == 1 << 50)
        #expect(chunk.residentCount == 0)
        #expect(!chunk.isHole)
        #expect(chunk.sourceRange?.method == .clone)
    }

    /// Read for a sink that does not copy ranges: a range of a file that shrank since its
    /// ranges were planned fails (the holes after it would make a file no version of it was),
    /// and a clone's range is read to the end of file, as the kernel would clone it.
    @Test func aRangeReadForASinkFollowsTheFileAsTheKernelWould() async throws {
        try await withScratchDirectory { directory in
            let path = directory.appending("source")
            let data = randomBytes(count: 200_000, seed: 34)
            try writeFile(path, Array(data[..<100_000]))
            let file = try await FileChunks.open(path)
            let descriptor = try #require(file.kernelCopySource)
            try writeFile(path, data)  // grew (the same inode: truncated and rewritten)
            let clone = Chunk.sourceRange(.init(descriptor: descriptor, offset: 0, method: .clone), count: 100_000)
            #expect(try clone.readingSourceRange(chunkSize: 65_536, path: path).flatMap(\.bytes) == data)
            let slice = Chunk.sourceRange(.init(descriptor: descriptor, offset: 150_000, method: .kernelCopy), count: 100_000)
            let error = try #require(throws: FileError.self) { try slice.readingSourceRange(chunkSize: 65_536, path: path) }
            #expect(error.code == .io && error.path == path)
        }
    }

    /// A hole longer than a window (64 MiB) before the data comes as hole chunks of at most
    /// 64 MiB, never one chunk as long as the hole (a range of a 200 TiB hole once mapped as
    /// many zeros), and a range holds at most 32 extents.
    @Test func aLongHoleAndManyExtentsAreBounded() async throws {
        try await withScratchDirectory { directory in
            let path = directory.appending("source")
            let size: Int64 = 110 << 20
            let extents = (0..<100).map { (offset: (100 << 20) + Int64($0) * 65_536, bytes: randomBytes(count: 4096, seed: UInt64($0))) }
            try writeSparseFile(path, size: size, extents: extents)
            let file = try await FileChunks.open(path)
            var (offset, largest, mostExtents): (Int64, Int, Int) = (0, 0, 0)
            for try await chunk in SourceRanges(of: file, method: .kernelCopy, sliceSize: 4 << 20, findsHoles: true) {
                if let range = chunk.sourceRange { mostExtents = max(mostExtents, range.data(count: chunk.count).count) }
                if chunk.isHole { largest = max(largest, chunk.count) }
                offset += Int64(chunk.count)
            }
            #expect(offset == size)
            #expect(largest == FileReader.maximumHoleChunk)
            #expect(mostExtents == 32)
            let sink = CopierJobTests.MemorySink()
            let again = try await FileChunks.open(path)
            _ = try await Pipeline(
                ranges: SourceRanges(of: again, method: .kernelCopy, sliceSize: 4 << 20, findsHoles: true), to: sink,
                options: .init(), progress: ProgressHub()
            ).run()
            #expect(await sink.bytes == sparseContent(size: size, extents: extents))
        }
    }
}
