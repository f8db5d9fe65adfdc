#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Sluice
import SluiceTestSupport

/// ``Copier``: many files at once within one byte budget, each atomic, a failure per file,
/// one progress, cancellation of all; and ``PipelineShare``'s arithmetic.
@Suite(.timeLimit(.minutes(3)))
struct CopierTests {
    /// Bytes that differ per file.
    static func content(_ index: Int, size: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            guard var byte = buffer.baseAddress else { return }
            for offset in 0..<size {
                byte.initialize(to: UInt8(truncatingIfNeeded: offset &* 31 &+ index))
                byte += 1
            }
            initialized = size
        }
    }

    /// Writes `sizes.count` sources into `directory`/in and makes `directory`/out.
    static func makeSources(_ sizes: [Int], in directory: ScratchDirectory) throws -> [Pathname] {
        mkdir(directory.appending("in").description, 0o755)
        mkdir(directory.appending("out").description, 0o755)
        return try sizes.enumerated().map { index, size in
            let path = directory.appending(Pathname("in/f\(index)"))
            try writeFile(path, content(index, size: size))
            return path
        }
    }

    /// A collector of outcomes, in the order they come.
    final class Outcomes: @unchecked Sendable {
        private let lock = LockedValue<[Copier.Outcome]>([])
        func add(_ outcome: Copier.Outcome) { lock.withLock { $0.append(outcome) } }
        var all: [Copier.Outcome] { lock.withLock { $0 } }
    }

    @Test func copiesEveryFileAndSyncsTheirDirectoryOnce() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let sizes = [0, 1, 4095, 4096, 70_000, 300_000, 1 << 20, 3 << 20]
        let sources = try Self.makeSources(sizes, in: directory)
        let engine = Copier(
            options: .init(width: 3, byteBudget: 1 << 20, chunkSize: 64 << 10,
                           copy: .init(forcesPipeline: true, pipeline: .init(capacity: 8))),
            totalBytes: Int64(sizes.reduce(0, +)), totalFiles: sizes.count)
        let outcomes = Outcomes()
        for (index, source) in sources.enumerated() {
            let destination = directory.appending(Pathname("out/f\(index)"))
            let submitted = try await engine.submit(.init(
                source: source, destination: destination, sourceStatus: try FileStatus.of(source), completion: outcomes.add))
            #expect(submitted == index)
        }
        let totals = await engine.finish()
        #expect(totals.committed == sizes.count)
        #expect(totals.failed == 0)
        #expect(totals.bytesRead == Int64(sizes.reduce(0, +)))
        #expect(totals.peakBudgetBytes <= 1 << 20)
        #expect(totals.unsyncedDirectories.isEmpty)
        #expect(totals.progress?.files?.completed == sizes.count)
        #expect(totals.progress?.fraction == 1)
        #expect(outcomes.all.map(\.index).sorted() == Array(sizes.indices))
        for outcome in outcomes.all {
            let committed = try outcome.result.get()
            #expect(committed.isDurableOnceDirectorySynced)
            #expect(outcome.progress.files?.current == outcome.source)
            #expect(outcome.progress.files?.currentIndex == outcome.index)
        }
        for (index, size) in sizes.enumerated() {
            #expect(try readFile(directory.appending(Pathname("out/f\(index)"))) == Self.content(index, size: size))
        }
        #expect(try temporaryFiles(in: directory.appending("out")).isEmpty)
    }

    @Test func aFailedFileDoesNotStopTheOthers() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let sources = try Self.makeSources([10, 20, 30], in: directory)
        // The second destination exists: without overwrite, that file fails.
        try writeFile(directory.appending("out/f1"), [1, 2, 3])
        let engine = Copier(options: .init(width: 2))
        let outcomes = Outcomes()
        for (index, source) in sources.enumerated() {
            try await engine.submit(.init(
                from: .file(source), to: .file(directory.appending(Pathname("out/f\(index)"))), completion: outcomes.add))
        }
        try await engine.submit(.init(
            from: .file(directory.appending("in/missing")), to: .file(directory.appending("out/missing")),
            completion: outcomes.add))
        let totals = await engine.finish()
        #expect(totals.committed == 2)
        #expect(totals.failed == 2)
        let failed = outcomes.all.filter { if case .failure = $0.result { true } else { false } }.map(\.index).sorted()
        #expect(failed == [1, 3])
        #expect(try readFile(directory.appending("out/f1")) == [1, 2, 3])
        #expect(try readFile(directory.appending("out/f2")) == Self.content(2, size: 30))
        #expect(totals.progress?.files?.failed == 2)
    }

    /// A verification set in the copy options (the engine's, or a job's own) is kept, not
    /// dropped for the job's unset ``Copier/Job/verification``: every file, of one chunk
    /// or many, is read back before its commit.
    @Test func aVerificationInTheCopyOptionsIsKept() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let sizes = [100, 300_000]
        let sources = try Self.makeSources(sizes, in: directory)
        let verified = RegularFileCopy.Options(pipeline: .init(verifiesOutput: true))
        let engine = Copier(options: .init(width: 2, chunkSize: 64 << 10, copy: verified))
        let outcomes = Outcomes()
        for (index, source) in sources.enumerated() {
            try await engine.submit(.init(
                from: .file(source), to: .file(directory.appending(Pathname("out/engine\(index)"))), completion: outcomes.add))
            var job = Copier.Job(
                from: .file(source), to: .file(directory.appending(Pathname("out/job\(index)"))), completion: outcomes.add)
            job.copyOptions = verified
            try await engine.submit(job)
        }
        let totals = await engine.finish()
        #expect(totals.committed == 4)
        let verifications = outcomes.all.map { outcome -> CopyReport.VerificationOutcome? in
            guard case .success(let committed) = outcome.result else { return nil }
            return committed.report.verification
        }
        #expect(verifications.count == 4)
        #expect(verifications.allSatisfy { $0 == .verified }, "\(verifications)")
    }

    @Test func aCancelledEngineLeavesOnlyWholeFiles() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let sizes = Array(repeating: 200_000, count: 12)
        let sources = try Self.makeSources(sizes, in: directory)
        let engine = Copier(options: .init(width: 2, copy: .init(forcesPipeline: true)))
        let outcomes = Outcomes()
        var accepted = 0
        for (index, source) in sources.enumerated() {
            if index == 5 { engine.cancel() }
            do {
                try await engine.submit(.init(
                    from: .file(source), to: .file(directory.appending(Pathname("out/f\(index)"))), completion: outcomes.add))
                accepted += 1
            } catch {
                #expect(index >= 5)
            }
        }
        let totals = await engine.finish()
        #expect(accepted == 5)
        #expect(totals.committed + totals.failed == accepted)
        #expect(outcomes.all.count == accepted)
        for (index, size) in sizes.enumerated() where exists(directory.appending(Pathname("out/f\(index)"))) {
            #expect(try readFile(directory.appending(Pathname("out/f\(index)"))) == Self.content(index, size: size))
        }
        #expect(try temporaryFiles(in: directory.appending("out")).isEmpty)
    }

    /// A copier's files get their holes as its file options say, whatever a job's sink options
    /// say (one home for the setting: the reader and the sink must agree). `--sparse=always`
    /// makes a hole of a run of zeros written as data; a job's default sink options (`auto`)
    /// used to keep it as data.
    @Test func aJobsHolesFollowTheCopiersFileOptions() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let data = Array(repeating: UInt8(0x5a), count: 4096)
        let contents = data + Array(repeating: 0, count: 4 << 20) + data
        try writeFile(directory.appending("dense"), contents)
        let copier = Copier(options: .init(sink: .init(synchronizes: false, holes: .always)))
        let committed = try await copier.copy(.init(from: .file(directory.appending("dense")), to: .file(directory.appending("copy"))))
        _ = await copier.finish()
        #expect(committed.report.method == .pipeline)
        #expect(try readFile(directory.appending("copy")) == contents)
        #expect(try allocatedBytes(directory.appending("copy")) < 1 << 20)
    }

    @Test func aShareFitsTheFileAndTheBudget() {
        // A small file reads in a chunk of its own size, rounded up to 4 KiB.
        let small = PipelineShare(fileSize: 1000, chunkSize: 1 << 20, capacity: 4, channels: 1, share: 4 << 20)
        #expect(small.chunkSize == 4096 && small.capacity == 4 && small.bytes == 4096 * 6)
        // A large file's capacity shrinks to its share: 4 MiB of 1 MiB chunks, a copy.
        let large = PipelineShare(fileSize: 1 << 30, chunkSize: 1 << 20, capacity: 4, channels: 1, share: 4 << 20)
        #expect(large.chunkSize == 1 << 20 && large.capacity == 2 && large.bytes == 4 << 20)
        // Not even one chunk per channel fits: capacity 1, charged more than the share.
        let tight = PipelineShare(fileSize: nil, chunkSize: 1 << 20, capacity: 4, channels: 2, share: 1 << 20)
        #expect(tight.chunkSize == 1 << 20 && tight.capacity == 1 && tight.bytes == 5 << 20)
    }
}

/// Cancellation reaches a file that waits: a FIFO source with no writer.
@Suite(.timeLimit(.minutes(3)))
struct CopierCancellationTests {
    @Test func cancellingWhileAFIFOWaitsForAWriterEndsIt() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let fifo = directory.appending("p")
        #expect(mkfifo(fifo.description, 0o600) == 0)
        let engine = Copier()
        let started = AsyncStream<Void>.makeStream()
        let progress = engine.progress.subscribe()
        Task {
            for await snapshot in progress where snapshot.files?.current == fifo {
                started.continuation.yield()
                break
            }
        }
        try await engine.submit(.init(from: .file(fifo), to: .file(directory.appending("out"))))
        for await _ in started.stream { break }
        let finishing = Task { await engine.finish() }
        finishing.cancel()
        let totals = await finishing.value
        #expect(totals.failed == 1)
        #expect(!exists(directory.appending("out")))
    }

    @Test func copyReturnsTheCommitOfOneFileAfterItsJobsCompletion() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let sources = try CopierTests.makeSources([300_000], in: directory)
        let destination = directory.appending(Pathname("out/f0"))
        let copier = Copier()
        let outcomes = CopierTests.Outcomes()
        let committed = try await copier.copy(.init(from: .file(sources[0]), to: .file(destination), completion: outcomes.add))
        #expect(committed.report.bytesWritten == 300_000)
        #expect(outcomes.all.count == 1)
        #expect(try readFile(destination) == CopierTests.content(0, size: 300_000))
        let totals = await copier.finish()
        #expect(totals.committed == 1 && totals.failed == 0)
    }

    @Test func copyOfAMissingSourceThrowsItsFileErrorAndLeavesNothing() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        _ = try CopierTests.makeSources([], in: directory)
        let destination = directory.appending(Pathname("out/f0"))
        let copier = Copier()
        await #expect(throws: FileError.self) {
            try await copier.copy(.init(from: .file(directory.appending(Pathname("in/missing"))), to: .file(destination)))
        }
        let totals = await copier.finish()
        #expect(totals.failed == 1)
        #expect(try entries(in: directory.appending("out")).isEmpty)
    }

    @Test func copyAfterTheCopierWasCancelledThrowsCancellationError() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let sources = try CopierTests.makeSources([10], in: directory)
        let copier = Copier()
        copier.cancel()
        await #expect(throws: CancellationError.self) {
            try await copier.copy(.init(from: .file(sources[0]), to: .file(directory.appending(Pathname("out/f0")))))
        }
        _ = await copier.finish()
        #expect(try entries(in: directory.appending("out")).isEmpty)
    }
}
