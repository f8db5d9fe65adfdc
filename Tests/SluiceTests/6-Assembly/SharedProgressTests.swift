#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Sluice
import SluiceTestSupport

/// One ``ManyFilesProgress`` for a whole operation, handed to several engines one after another
/// (the segments of a command's operands, each tree of `copy -r a b dest/`): its files keep
/// distinct indices, its totals count every engine's files, and it ends once, when its owner
/// finishes it, never with an engine.
@Suite(.timeLimit(.minutes(3)))
struct SharedProgressTests {
    @Test func enginesSharingAProgressNumberTheirFilesAndEndItOnce() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let sizes = [10_000, 200_000, 5_000]
        let sources = try CopierTests.makeSources(sizes, in: directory)
        let progress = ManyFilesProgress(totalBytes: Int64(sizes.reduce(0, +)), totalFiles: sizes.count)
        // Subscribed before the first engine starts; read only at the end, so it keeps the
        // newest snapshot: the final one if and only if nothing was published after it.
        let updates = progress.hub.subscribe()
        let outcomes = CopierTests.Outcomes()
        let options = Copier.Options(width: 2, byteBudget: 1 << 20, chunkSize: 4096, copy: .init(forcesPipeline: true))
        var peaks: [Int] = []
        for segment in [0..<2, 2..<3] {
            let engine = Copier(options: options, progress: progress)
            for index in segment {
                try await engine.submit(.init(
                    source: sources[index], destination: directory.appending(Pathname("out/f\(index)")),
                    sourceStatus: try FileStatus.of(sources[index]), completion: outcomes.add))
            }
            let totals = await engine.finish()
            #expect(totals.committed == segment.count)
            // The engine's end is not the operation's.
            #expect(totals.progress?.isFinal == false)
            #expect(totals.progress?.fraction ?? 1 < 1)
            peaks.append(totals.peakBudgetBytes)
        }
        let last = progress.finish()
        #expect(last.isFinal)
        #expect(last.fraction == 1)
        #expect(last.filesCommitted == 3)
        #expect(last.bytesCommitted == Int64(sizes.reduce(0, +)))
        #expect(last.files?.total == 3)
        #expect(last.peakBufferedBytes == Int64(peaks.max() ?? 0))
        // Each engine numbers its own jobs from 0; the progress numbers the operation's files.
        #expect(outcomes.all.map(\.index).sorted() == [0, 0, 1])
        #expect(outcomes.all.compactMap(\.progress.files?.currentIndex).sorted() == [0, 1, 2])
        let ordered = outcomes.all.sorted { ($0.progress.files?.currentIndex ?? 0) < ($1.progress.files?.currentIndex ?? 0) }
        #expect(ordered.map(\.source) == sources)
        var seen: [ProgressSnapshot] = []
        for await snapshot in updates { seen.append(snapshot) }
        #expect(seen.count == 1)
        #expect(seen.last == last)
    }

    /// Two trees through two copiers sharing a progress that grows: after the first tree the
    /// totals are still growing (more may come), and the last snapshot counts both trees.
    @Test func treesSharingAProgressGrowOneTotal() async throws {
        try await withScratchDirectory { scratch in
            let handle = try DirectoryHandle.open(scratch.path)
            try handle.makeDirectory("a", permissions: 0o755)
            try handle.makeDirectory("b", permissions: 0o755)
            try handle.makeDirectory("t", permissions: 0o755)
            try writeFile(scratch.appending("a/f0"), CopierTests.content(0, size: 30_000))
            try writeFile(scratch.appending("a/f1"), CopierTests.content(1, size: 1))
            try writeFile(scratch.appending("b/f2"), CopierTests.content(2, size: 70_000))
            let progress = ManyFilesProgress(isTotalGrowing: true)
            let indices = LockedValue<[Int]>([])
            for tree in ["a", "b"] {
                let isLast = tree == "b"
                let copier = Copier(options: .init(width: 2), progress: progress)
                let report = try await copier.copyTree(
                    from: scratch.appending(Pathname(tree)), to: scratch.appending("t"), options: .init(), completesTotal: isLast,
                    onOutcome: { outcome in indices.withLock { $0.append(outcome.progress.files?.currentIndex ?? -1) } },
                    onFailure: { _ in })
                _ = await copier.finish()
                #expect(report.failures == 0)
                // Growing until the last tree's walk is over; then a fraction, below 1 until the end.
                #expect(progress.latest.files?.isTotalGrowing == !isLast)
                #expect((progress.latest.fraction == nil) == !isLast)
                #expect(progress.latest.fraction ?? 0 < 1)
            }
            let last = progress.finish()
            #expect(last.files?.total == 3)
            #expect(last.filesCommitted == 3)
            #expect(last.totalBytes == 100_001)
            #expect(last.fraction == 1)
            #expect(indices.withLock { $0 }.sorted() == [0, 1, 2])
            #expect(try readFile(scratch.appending("t/b/f2")) == CopierTests.content(2, size: 70_000))
        }
    }

    /// ``ManyFilesProgress/reserveIndex()`` numbers from 0, once each, from many tasks at once.
    @Test func reservedIndicesAreDistinct() async {
        let progress = ManyFilesProgress()
        let indices = await withTaskGroup(of: [Int].self) { group in
            for _ in 0..<4 { group.addTask { (0..<250).map { _ in progress.reserveIndex() } } }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(indices.sorted() == Array(0..<1000))
    }
}
