#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Sluice
import SluiceTestSupport

/// ``Copier``'s cheap paths for many files: a file of one chunk copied in one step (by
/// the kernel where the table allows), and durable files made durable as one batch by
/// `syncfs(2)` before any of them is renamed.
@Suite(.timeLimit(.minutes(3)))
struct CopierBatchTests {
    typealias Outcomes = CopierTests.Outcomes

    @Test func aFileOfOneChunkIsCopiedInOneStepByTheKernel() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let chunk = 64 << 10
        let sizes = [1, 4096, chunk, chunk + 1]
        let sources = try CopierTests.makeSources(sizes, in: directory)
        let events = CopierEvents()
        let engine = Copier(
            options: .init(width: 2, chunkSize: chunk), progress: ManyFilesProgress(), ownsProgress: true, system: .live,
            observer: events.observer)
        let outcomes = Outcomes()
        for (index, source) in sources.enumerated() {
            try await engine.submit(.init(
                source: source, destination: directory.appending(Pathname("out/f\(index)")),
                sourceStatus: try FileStatus.of(source), completion: outcomes.add))
        }
        let totals = await engine.finish()
        #expect(totals.committed == sizes.count)
        // The three files of one chunk at most went in one step; the last through RegularFileCopy.
        #expect(events.count(.copiedInOneStep) == 3)
        let type = try directory.fileSystemType()
        let clones = CopyMethod.cloningFileSystems.contains(type)
        let copiesInTheKernel = CopyMethod.kernelCopyFileSystems.contains(type)
        for outcome in outcomes.all {
            let path = try outcome.result.get().report.method
            let small = sizes[outcome.index] <= chunk
            #expect(path == (clones ? .clone : small || copiesInTheKernel ? .kernelCopy : .pipeline), "\(outcome.index) on \(type)")
        }
        for (index, size) in sizes.enumerated() {
            #expect(try readFile(directory.appending(Pathname("out/f\(index)"))) == CopierTests.content(index, size: size))
        }
        #expect(try temporaryFiles(in: directory.appending("out")).isEmpty)
    }

    @Test func durableFilesAreRenamedOnlyOnceTheWholeBatchIsWritten() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let sizes = [10, 5000, 70_000, 300_000, 3]
        let sources = try CopierTests.makeSources(sizes, in: directory)
        let out = directory.appending("out")
        // Width for all: every file is copied before the batch is committed, at the end.
        var options = Copier.Options(width: sizes.count, chunkSize: 64 << 10)
        options.syncBatchWaitMilliseconds = 600_000  // one batch, committed at the end
        let engine = Copier(options: options)
        let seen = LockedValue<[(renamed: Int, waiting: Int)]>([])
        for (index, source) in sources.enumerated() {
            try await engine.submit(.init(
                source: source, destination: out.appending(Pathname("f\(index)")), sourceStatus: try FileStatus.of(source),
                completion: { _ in
                // At each completion: the files named so far, and the unnamed (O_TMPFILE)
                // temporaries still waiting, open in `out`.
                let names = (try? entries(in: out)) ?? []
                let waiting = openDescriptors(under: out).filter { $0.hasSuffix(" (deleted)") }.count
                seen.withLock { $0.append((names.count, waiting)) }
            }))
        }
        let totals = await engine.finish()
        #expect(totals.committed == sizes.count)
        #expect(totals.unsyncedDirectories.isEmpty)
        let steps = seen.withLock { $0 }
        #expect(steps.map(\.renamed) == Array(1...sizes.count))
        #expect(steps.map(\.waiting) == Array((0..<sizes.count).reversed()))
        for (index, size) in sizes.enumerated() {
            #expect(try readFile(out.appending(Pathname("f\(index)"))) == CopierTests.content(index, size: size))
        }
    }

    @Test func aFileVerifiedOnItsOwnIsDurableOnceItsDirectoryIsSynced() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let sizes = [10, 70_000]
        let sources = try CopierTests.makeSources(sizes, in: directory)
        let engine = Copier(options: .init(width: 2, chunkSize: 64 << 10, copy: .init(pipeline: .init(verifiesOutput: true))))
        let outcomes = Outcomes()
        for (index, source) in sources.enumerated() {
            try await engine.submit(.init(
                source: source, destination: directory.appending(Pathname("out/f\(index)")),
                sourceStatus: try FileStatus.of(source), completion: outcomes.add))
        }
        let totals = await engine.finish()
        #expect(totals.committed == sizes.count)
        // Not in a batch (it is read back after its own fsync), yet its directory is synced.
        for outcome in outcomes.all {
            #expect(try outcome.result.get().isDurableOnceDirectorySynced)
        }
    }

    @Test func aCancelledEngineRenamesNoneOfItsWaitingBatch() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let sizes = [10, 20, 30]
        let sources = try CopierTests.makeSources(sizes, in: directory)
        var options = Copier.Options(width: sizes.count)
        options.syncBatchWaitMilliseconds = 600_000  // one batch, committed at the end
        let events = CopierEvents()
        let engine = Copier(options: options, progress: ManyFilesProgress(), ownsProgress: true, system: .live, observer: events.observer)
        let outcomes = Outcomes()
        for (index, source) in sources.enumerated() {
            try await engine.submit(.init(
                source: source, destination: directory.appending(Pathname("out/f\(index)")),
                sourceStatus: try FileStatus.of(source), completion: outcomes.add))
        }
        // Every file sealed and waiting in the batch (committed only at the end): then cancel.
        await events.wait(for: .sealedIntoBatch, times: sizes.count)
        engine.cancel()
        let totals = await engine.finish()
        #expect(totals.committed == 0)
        #expect(totals.failed == sizes.count)
        #expect(outcomes.all.allSatisfy { if case .failure(is CancellationError) = $0.result { true } else { false } })
        #expect(try entries(in: directory.appending("out")).isEmpty)
    }

    /// What a job's transform factory holds, to see when the engine lets it go.
    private final class Canary: Sendable {}

    /// A job whose transform factory holds `canary`, and nothing else does.
    private static func job(from source: Pathname, to destination: Pathname, holding canary: Canary, outcomes: Outcomes) throws -> Copier.Job {
        Copier.Job(
            source: source, destination: destination, sourceStatus: try FileStatus.of(source),
            transform: {
                withExtendedLifetime(canary) {}
                return try GzipEncoder(level: .fastest, outputChunkSize: 64 << 10)
            },
            completion: outcomes.add)
    }

    /// Up to 1,024 sealed files wait for their batch's syncfs(2) at once: each keeps what its
    /// completion needs, not its job (whose factories, options and source are spent).
    @Test func aFileWaitingForItsBatchNoLongerHoldsItsJob() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let sources = try CopierTests.makeSources([70_000], in: directory)
        var options = Copier.Options(width: 1)
        options.syncBatchWaitMilliseconds = 600_000  // one batch, committed at the end
        let events = CopierEvents()
        let engine = Copier(options: options, progress: ManyFilesProgress(), ownsProgress: true, system: .live, observer: events.observer)
        let outcomes = Outcomes()
        weak var held: Canary?
        do {
            let canary = Canary()
            held = canary
            try await engine.submit(
                Self.job(from: sources[0], to: directory.appending(Pathname("out/f0.gz")), holding: canary, outcomes: outcomes))
        }
        // Sealed and in its batch (which waits ten minutes), not yet renamed: its job is let go.
        await events.wait(for: .sealedIntoBatch)
        #expect(held == nil)
        #expect(outcomes.all.isEmpty)
        let totals = await engine.finish()
        #expect(totals.committed == 1)
        #expect(try outcomes.all.map { try $0.result.get().report.bytesRead } == [70_000])
    }
}
