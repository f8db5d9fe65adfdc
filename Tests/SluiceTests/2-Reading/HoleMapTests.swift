#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CSluiceShims
import Testing
@testable import Sluice
import SluiceTestSupport

/// Trust no hole map: a `SEEK_DATA`/`SEEK_HOLE` map that claims fewer data bytes than the
/// allocated blocks imply, or data past the end, is distrusted; the file is then read as data
/// and its zero blocks become holes, so nothing is lost and the copy stays sparse. Lying maps
/// and `fstat` results come through the seam.
@Suite(.timeLimit(.minutes(3)))
struct HoleMapTests {
    /// 512 KiB of data at 0, 64 KiB at 3 MiB, in a file of 4 MiB: about 576 KiB allocated.
    static let extents: [(offset: Int64, bytes: [UInt8])] = [
        (0, randomBytes(count: 512 << 10, seed: 1)),
        (3 << 20, randomBytes(count: 64 << 10, seed: 2)),
    ]
    static let size: Int64 = 4_194_304

    /// The real calls, with `SEEK_DATA`/`SEEK_HOLE` answered by `map` (data ranges) and
    /// `fstat`'s `st_blocks` replaced by `blocks` when given.
    static func lying(map: [Range<Int64>]?, blocks: Int64? = nil) -> SystemCalls {
        var system = SystemCalls.live
        if let map {
            system.seek = { descriptor, offset, whence in
                switch whence {
                case CSluiceShims_SEEK_DATA:
                    guard let next = map.first(where: { $0.upperBound > offset }) else { return .failure(.noSuchAddressOrDevice) }
                    return SystemCalls.liveSeek(descriptor, max(offset, next.lowerBound), SEEK_SET)
                case CSluiceShims_SEEK_HOLE:
                    let end = map.first(where: { $0.contains(offset) })?.upperBound ?? offset
                    return SystemCalls.liveSeek(descriptor, end, SEEK_SET)
                default: return SystemCalls.liveSeek(descriptor, offset, whence)
                }
            }
        }
        if let blocks {
            system.status = { descriptor in
                SystemCalls.liveStatus(descriptor).map { raw in
                    var changed = raw
                    changed.st_blocks = blkcnt_t(blocks)
                    return changed
                }
            }
        }
        return system
    }

    /// Copies `in` to `out` through the pipeline (or the path `options` choose) with `system`
    /// for the source (checking it against `expected`, else the sparse file of `extents`); returns
    /// whether the map was distrusted and the output's allocated bytes.
    static func copy(
        in directory: ScratchDirectory, system: SystemCalls, options: RegularFileCopy.Options = .init(forcesPipeline: true),
        findsHoles: Bool = true, expected: [UInt8]? = nil
    ) async throws -> (distrusted: Bool, allocated: Int64, report: CopyReport) {
        let source = try await FileChunks.open(
            directory.appending("in"), descriptor: nil, ownsDescriptor: true, chunkSize: 64 << 10, findsHoles: findsHoles,
            system: system)
        let sink = try await FileSink.create(
            at: directory.appending("out"), source: source, options: .init(synchronizes: false))
        let report = try await RegularFileCopy(from: source, to: sink, options: options).run()
        #expect(try readFile(directory.appending("out")) == expected ?? sparseContent(size: size, extents: extents))
        return (source.reader.distrustsHoleMap, try FileStatus.of(directory.appending("out")).allocatedBytes, report)
    }

    @Test func anHonestMapIsFollowedAndTheCopyStaysSparse() async throws {
        try await withScratchDirectory { directory in
            try writeSparseFile(directory.appending("in"), size: Self.size, extents: Self.extents)
            let copied = try await Self.copy(in: directory, system: .live)
            #expect(!copied.distrusted)
            #expect(copied.allocated < 2_097_152)
        }
    }

    /// The map claims 4 KiB of data where 576 KiB are allocated: distrusted, read as data,
    /// nothing lost, and the zero blocks become holes.
    @Test func aMapThatHidesDataIsDistrusted() async throws {
        try await withScratchDirectory { directory in
            try writeSparseFile(directory.appending("in"), size: Self.size, extents: Self.extents)
            let copied = try await Self.copy(in: directory, system: Self.lying(map: [0..<4096]))
            #expect(copied.distrusted)
            #expect(copied.allocated < 2_097_152)
        }
    }

    @Test func aMapWithDataPastTheEndIsDistrusted() async throws {
        try await withScratchDirectory { directory in
            try writeSparseFile(directory.appending("in"), size: Self.size, extents: Self.extents)
            let map: [Range<Int64>] = [0..<524_288, 3_145_728..<(Self.size + 8192)]
            let copied = try await Self.copy(in: directory, system: Self.lying(map: map))
            #expect(copied.distrusted)
        }
    }

    /// `fstat` says more blocks than the honest map's data can fill (beyond the slack).
    @Test func moreBlocksThanTheMapCanHoldIsDistrusted() async throws {
        try await withScratchDirectory { directory in
            try writeSparseFile(directory.appending("in"), size: Self.size, extents: Self.extents)
            let copied = try await Self.copy(in: directory, system: Self.lying(map: nil, blocks: 4096))
            #expect(copied.distrusted)
            #expect(copied.allocated < 2_097_152)
        }
    }

    /// No block and a map of one hole (`truncate -s`): consistent, copied as a hole, never read.
    @Test func aFileWithNoBlocksThatIsAllHoleStaysAHole() async throws {
        try await withScratchDirectory { directory in
            try writeSparseFile(directory.appending("in"), size: 64 << 20, extents: [])
            let source = try await FileChunks.open(directory.appending("in"), chunkSize: 64 << 10)
            #expect(!source.reader.distrustsHoleMap)
            var holes = 0
            for try await chunk in source where chunk.isHole { holes += chunk.count }
            #expect(holes == 67_108_864)
        }
    }

    /// The kernel's path follows the map's extents: with a map distrusted it is not taken.
    @Test func aDistrustedMapIsNotCopiedByTheKernel() async throws {
        try await withScratchDirectory { directory in
            try writeSparseFile(directory.appending("in"), size: Self.size, extents: Self.extents)
            var options = RegularFileCopy.Options()
            options.kernelCopyLimit = 1 << 30
            let honest = try await Self.copy(in: directory, system: .live, options: options)
            #expect(honest.report.method == .kernelCopy)
            unlink(directory.appending("out").description)
            let lied = try await Self.copy(in: directory, system: Self.lying(map: [0..<4096]), options: options)
            #expect(lied.report.method == .pipeline)
            #expect(lied.allocated < 2_097_152)
        }
    }

    /// The kernel copy follows the map the reader walked and checked at its open, as `cp`
    /// walks a file's map once: no `SEEK_DATA` or `SEEK_HOLE` beyond that walk's (for two
    /// extents: data at 0, its end, data at 3 MiB, its end, no data after), and the copy is
    /// exact and sparse.
    @Test func theKernelCopyFollowsTheMapReadAtTheOpen() async throws {
        try await withScratchDirectory { directory in
            try writeSparseFile(directory.appending("in"), size: Self.size, extents: Self.extents)
            let seeks = LockedValue((data: 0, hole: 0))
            var system = SystemCalls.live
            system.seek = { descriptor, offset, whence in
                if whence == CSluiceShims_SEEK_DATA { seeks.withLock { $0.data += 1 } }
                if whence == CSluiceShims_SEEK_HOLE { seeks.withLock { $0.hole += 1 } }
                return SystemCalls.liveSeek(descriptor, offset, whence)
            }
            var options = RegularFileCopy.Options()
            options.kernelCopyLimit = 1 << 30
            let copied = try await Self.copy(in: directory, system: system, options: options)
            #expect(copied.report.method == .kernelCopy)
            #expect(copied.allocated < 2_097_152)
            let counted = seeks.withLock { $0 }
            #expect(counted.data == 3 && counted.hole == 2, "\(counted)")
        }
    }

    /// A file with as many blocks as bytes has no hole to find: its kernel copy makes no
    /// `SEEK_DATA` or `SEEK_HOLE` probe (on tmpfs one `SEEK_HOLE` over 1 GiB walks its pages),
    /// and the copy is exact.
    @Test func aFullyAllocatedFileIsNotProbedForHoles() async throws {
        try await withScratchDirectory { directory in
            let bytes = randomBytes(count: 3 << 20, seed: 3)
            try writeSparseFile(directory.appending("in"), size: Int64(bytes.count), extents: [(0, bytes)])
            let seeks = LockedValue(0)
            var system = SystemCalls.live
            system.seek = { descriptor, offset, whence in
                if whence == CSluiceShims_SEEK_DATA || whence == CSluiceShims_SEEK_HOLE { seeks.withLock { $0 += 1 } }
                return SystemCalls.liveSeek(descriptor, offset, whence)
            }
            var options = RegularFileCopy.Options()
            options.kernelCopyLimit = 1 << 30
            let copied = try await Self.copy(in: directory, system: system, options: options, expected: bytes)
            #expect(copied.report.method == .kernelCopy)
            #expect(copied.report.bytesWritten == Int64(bytes.count))
            #expect(seeks.withLock { $0 } == 0)
        }
    }

    /// A source opened without its holes (for `--verify`) still has its map checked at open,
    /// which the kernel copy would follow: a lying one is not.
    @Test func theMapIsCheckedAlsoWhenItsHolesAreNotRead() async throws {
        try await withScratchDirectory { directory in
            try writeSparseFile(directory.appending("in"), size: Self.size, extents: Self.extents)
            var options = RegularFileCopy.Options()
            options.kernelCopyLimit = 1 << 30
            let copied = try await Self.copy(in: directory, system: Self.lying(map: [0..<4096]), options: options, findsHoles: false)
            #expect(copied.distrusted)
            #expect(copied.report.method == .pipeline)
        }
    }

    /// `--verify` never reads through the map: a source opened to be verified is read as data,
    /// whatever its map says, and the copy still finds its holes in the zero blocks.
    @Test func aVerifiedCopyReadsThroughReadAlone() async throws {
        #expect(FileChunks.HoleMode.auto.findsHoles(verifying: true) == false)
        #expect(FileChunks.HoleMode.auto.findsHoles(verifying: false))
        #expect(FileChunks.HoleMode.never.findsHoles(verifying: false) == false)
        try await withScratchDirectory { directory in
            try writeSparseFile(directory.appending("in"), size: Self.size, extents: Self.extents)
            var options = RegularFileCopy.Options(forcesPipeline: true)
            options.pipeline.verifiesOutput = true
            // A map that says "all hole" is never asked.
            let copied = try await Self.copy(
                in: directory, system: Self.lying(map: []), options: options,
                findsHoles: FileChunks.HoleMode.auto.findsHoles(verifying: true))
            #expect(copied.report.verification == .verified)
            #expect(copied.allocated < 2_097_152)
        }
    }

    @Test func theRuleAndItsSlack() {
        let map = HoleMap(dataBytes: 100 << 10, extents: 2, reachesPastEnd: false)
        let most: Int64 = 102_400 + 8192 + 65_536
        #expect(map.agrees(withAllocated: most))
        #expect(!map.agrees(withAllocated: most + 1))
        #expect(HoleMap(dataBytes: 0, extents: 0, reachesPastEnd: false).agrees(withAllocated: 0))
        #expect(!HoleMap(dataBytes: 0, extents: 0, reachesPastEnd: true).agrees(withAllocated: 0))
    }
}
