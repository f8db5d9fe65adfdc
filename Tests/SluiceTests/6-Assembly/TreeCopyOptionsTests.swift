#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Sluice
import SluiceTestSupport
import Testing

/// A copier's per-file options (``Copier/Options/copy``, ``Copier/Options/chunkSize``) take
/// effect on every path a tree's file goes by: one file at a time, and many at once, on the
/// general path and the one-step path for a file of one chunk.
@Suite(.timeLimit(.minutes(3)))
struct TreeCopyOptionsTests {
    /// How many files the copier copies at once.
    enum Width: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case one, many
        var testDescription: String { rawValue }
        var files: Int { self == .one ? 1 : 3 }
    }

    /// Copies the tree `s` of `scratch` (one file, `f`, of `data`, made by `make` when given) to
    /// `t` with `file` and `chunkSize`.
    ///
    /// - Returns: the file's report.
    static func copy(
        _ data: [UInt8], in scratch: ScratchDirectory, by width: Width, file: RegularFileCopy.Options,
        chunkSize: Int = FileChunks.defaultChunkSize, system: SystemCalls = .live
    ) async throws -> CopyReport {
        let handle = try DirectoryHandle.open(scratch.path)
        try handle.makeDirectory("s", permissions: 0o755)
        try writeFile(scratch.appending("s/f"), data)
        return try await copyTree(in: scratch, by: width, file: file, chunkSize: chunkSize, system: system)
    }

    /// Copies the tree `s` of `scratch`, made already, to `t`.
    static func copyTree(
        in scratch: ScratchDirectory, by width: Width, file: RegularFileCopy.Options = .init(),
        holes: FileChunks.HoleMode = .auto, chunkSize: Int = FileChunks.defaultChunkSize, system: SystemCalls = .live
    ) async throws -> CopyReport {
        let copied = try await copyTreeWithCopier(
            scratch.appending("s"), to: scratch.appending("t"),
            options: .init(width: width.files, chunkSize: chunkSize, copy: file, sink: .init(synchronizes: false, holes: holes)),
            system: system)
        #expect(copied.failures == [])
        let reports = copied.outcomes.compactMap { try? $0.result.get().report }
        try #require(reports.count == 1)
        return reports[0]
    }

    static func pattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) } }

    /// `reflink: .never` on a file system that clones (scripted: every descriptor says XFS,
    /// and a clone is a copy): no `FICLONE` tried, the pipeline taken; `.auto` clones.
    @Test(arguments: [Copier.ReflinkMode.never, .auto])
    func reflinkTakesEffectOnTheManyFilesPath(_ reflink: Copier.ReflinkMode) async throws {
        try await withScratchDirectory { scratch in
            let calls = KernelCalls(fileSystem: .xfs, emulatesClone: true)
            let data = Self.pattern(256 << 10)
            // Larger than a chunk: the engine's general path (RegularFileCopy), whose sink
            // takes the scripted calls.
            let report = try await Self.copy(
                data, in: scratch, by: .many, file: .init(reflink: reflink), chunkSize: 64 << 10, system: calls.system)
            #expect(calls.counts.clones == (reflink == .never ? 0 : 1))
            #expect(report.method == (reflink == .never ? .pipeline : .clone))
            #expect(try readFile(scratch.appending("t/f")) == data)
        }
    }

    /// `holes: .never`: a source with a hole of 1 MiB is copied with its hole filled (every
    /// byte allocated), where `.auto` would copy its data extent alone.
    @Test(arguments: Width.allCases)
    func sparseNeverFillsHoles(_ width: Width) async throws {
        try await withScratchDirectory { scratch in
            let handle = try DirectoryHandle.open(scratch.path)
            try handle.makeDirectory("s", permissions: 0o755)
            let size: Int64 = (1 << 20) + 4096
            let file = try Descriptor.open(scratch.appending("s/f"), O_WRONLY | O_CREAT, permissions: 0o644)
            try file.closeAfter { () throws in
                try file.setSize(size)
                _ = try Array(repeating: UInt8(9), count: 4096).withUnsafeBytes { try file.write(toAbsoluteOffset: 1 << 20, $0) }
            }
            let source = try FileStatus.of(scratch.appending("s/f"))
            try #require(source.allocatedBytes < source.size, "this file system keeps no hole: \(source.allocatedBytes) bytes allocated")
            let report = try await Self.copyTree(in: scratch, by: width, holes: .never)
            #expect(report.method == .pipeline)
            let copied = try FileStatus.of(scratch.appending("t/f"))
            #expect(copied.size == size)
            #expect(copied.allocatedBytes >= size)
        }
    }

    /// `forcesPipeline`: a file of one chunk, which would go in one step by
    /// `copy_file_range(2)`, goes through the pipeline.
    @Test(arguments: Width.allCases)
    func forcesPipelineTakesThePipeline(_ width: Width) async throws {
        try await withScratchDirectory { scratch in
            let report = try await Self.copy(Self.pattern(4096), in: scratch, by: width, file: .init(forcesPipeline: true))
            #expect(report.method == .pipeline)
            #expect(report.crc32 != nil)
        }
    }

    /// `computesCRC32`: the pipeline's report has a CRC-32 only when asked for one.
    @Test(arguments: Width.allCases, [false, true])
    func computesCRC32TakesEffect(_ width: Width, _ computes: Bool) async throws {
        try await withScratchDirectory { scratch in
            let data = Self.pattern(100_000)
            let report = try await Self.copy(
                data, in: scratch, by: width, file: .init(forcesPipeline: true, pipeline: .init(computesCRC32: computes)))
            #expect(report.method == .pipeline)
            var crc = CRC32()
            data.withUnsafeBytes { crc.update($0) }
            #expect(report.crc32 == (computes ? crc.value : nil))
        }
    }

    /// `rateLimit`: the file is paced, so it goes by the pipeline, the only path whose reads
    /// can be (a file of one chunk would go in one step by the kernel); a high rate, so
    /// nothing waits.
    @Test(arguments: Width.allCases)
    func rateLimitTakesThePacedPipeline(_ width: Width) async throws {
        try await withScratchDirectory { scratch in
            let report = try await Self.copy(
                Self.pattern(4096), in: scratch, by: width, file: .init(pipeline: .init(rateLimit: RateLimiter(bytesPerSecond: 1 << 30))))
            #expect(report.method == .pipeline)
        }
    }

    /// One limiter for the whole tree: 10 files of one chunk and 2 of five chunks, at a rate of
    /// ten chunks a second, go as 19 chunks after the first, 1.9 s on the test clock. Each file
    /// its own bucket would have let every file's first chunk through at once (0.8 s).
    @Test(arguments: Width.allCases)
    func oneLimiterPacesTheWholeTree(_ width: Width) async throws {
        try await withScratchDirectory { scratch in
            let chunk = 4096
            let handle = try DirectoryHandle.open(scratch.path)
            try handle.makeDirectory("s", permissions: 0o755)
            for index in 0..<12 {
                try writeFile(scratch.appending(Pathname("s/f\(index)")), Self.pattern(index < 10 ? chunk : 5 * chunk))
            }
            let clock = TestClock()
            let limiter = RateLimiter(bytesPerSecond: Int64(10 * chunk), clock: clock)
            let copied = try await copyTreeWithCopier(
                scratch.appending("s"), to: scratch.appending("t"),
                options: .init(
                    width: width.files, chunkSize: chunk, copy: .init(pipeline: .init(rateLimit: limiter)),
                    sink: .init(synchronizes: false)))
            #expect(copied.failures == [])
            #expect(clock.elapsed == .milliseconds(1900))
        }
    }

    /// `verifiesOutput: true`: the file is read back before its commit.
    @Test(arguments: Width.allCases)
    func verificationReadsTheFileBack(_ width: Width) async throws {
        try await withScratchDirectory { scratch in
            let report = try await Self.copy(
                Self.pattern(300_000), in: scratch, by: width, file: .init(pipeline: .init(verifiesOutput: true)))
            #expect(report.verification == .verified)
        }
    }

    /// `chunkSize` 4 KiB: a file of 256 KiB is read in chunks of 4 KiB, so at most the
    /// default 4 of them are buffered (the engine's default chunk would be the whole file).
    @Test(arguments: Width.allCases)
    func chunkSizeBoundsWhatIsBuffered(_ width: Width) async throws {
        try await withScratchDirectory { scratch in
            let report = try await Self.copy(
                Self.pattern(256 << 10), in: scratch, by: width, file: .init(forcesPipeline: true), chunkSize: 4096)
            #expect(report.method == .pipeline)
            #expect(report.peakBufferedBytes > 0)
            #expect(report.peakBufferedBytes <= 4 * 4096)
        }
    }

    /// The pipeline's capacity 1: at most one chunk buffered.
    @Test(arguments: Width.allCases)
    func capacityBoundsWhatIsBuffered(_ width: Width) async throws {
        try await withScratchDirectory { scratch in
            let report = try await Self.copy(
                Self.pattern(256 << 10), in: scratch, by: width, file: .init(forcesPipeline: true, pipeline: .init(capacity: 1)),
                chunkSize: 4096)
            #expect(report.method == .pipeline)
            #expect(report.peakBufferedBytes > 0)
            #expect(report.peakBufferedBytes <= 4096)
        }
    }

    /// The engine fits a job's own capacity and chunk size into its share, in place of its own.
    @Test func aJobsOwnCapacityAndChunkSizeSizeItsShare() async {
        let engine = Copier(options: .init(width: 1))
        var job = Copier.Job(source: "a", destination: "b", sourceStatus: nil)
        #expect(engine.share(of: job, within: 32 << 20).chunkSize == FileChunks.defaultChunkSize)
        job.copyOptions = .init(pipeline: .init(capacity: 2))
        job.chunkSize = 8192
        let share = engine.share(of: job, within: 32 << 20)
        #expect(share.chunkSize == 8192)
        #expect(share.capacity == 2)
        _ = await engine.finish()
    }
}
