#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Sluice
import SluiceTestSupport
import Testing

/// ``Copier/copyTree(from:to:options:onOutcome:onFailure:)``: a tree's regular files go through
/// the copier's own engine, beside its other files, and the call returns once the tree's own
/// entries are done, before the copier is finished.
@Suite(.timeLimit(.minutes(3)))
struct CopierTreeTests {
    /// A tree `s` of two regular files (one in `sub/`) and a link, and a file `single` beside it.
    static func makeTree(in scratch: ScratchDirectory) throws -> Pathname {
        let source = scratch.appending("s")
        let handle = try DirectoryHandle.open(scratch.path)
        try handle.makeDirectory("s", permissions: 0o755)
        let tree = try handle.openDirectory("s")
        try tree.makeDirectory("sub", permissions: 0o750)
        try writeFile(source.appending("a"), Array("alpha".utf8))
        try writeFile(source.appending("sub/b"), Array(repeating: 7, count: 300_000))
        #expect(symlink("a", source.appending("link").description) == 0)
        try writeFile(scratch.appending("single"), Array("single".utf8))
        return source
    }

    @Test func aTreeGoesThroughTheCopiersEngineBesideItsOtherFiles() async throws {
        try await withScratchDirectory { scratch in
            let source = try Self.makeTree(in: scratch)
            let copier = Copier(options: .init(width: 2, sink: .init(preservesAttributes: true)))
            let progress = copier.progress.subscribe()
            let outcomes = LockedValue<[Pathname]>([])
            try await copier.submit(.init(from: .file(scratch.appending("single")), to: .file(scratch.appending("single.copy"))))
            let report = try await copier.copyTree(
                from: source, to: scratch.appending("t"),
                onOutcome: { outcome in outcomes.withLock { $0.append(outcome.destination) } })
            // Returned before finish(): the tree's own files are in place already.
            #expect(report.files == 2)
            #expect(report.directories == 2)
            #expect(report.symbolicLinks == 1)
            #expect(report.failures == 0)
            #expect(report.bytes == 300_005)
            #expect(Set(outcomes.withLock { $0 }) == [scratch.appending("t/a"), scratch.appending("t/sub/b")])
            #expect(try readFile(scratch.appending("t/a")) == Array("alpha".utf8))
            #expect(try readFile(scratch.appending("t/sub/b")) == Array(repeating: 7, count: 300_000))
            #expect(try FileStatus.of(scratch.appending("t/sub")).permissions & 0o7777 == 0o750)
            #expect(try FileStatus.of(scratch.appending("t/link"), followsLinks: false).kind == .symbolicLink)

            let totals = await copier.finish()
            #expect(totals.committed == 3)
            #expect(totals.failed == 0)
            #expect(totals.unsyncedDirectories.isEmpty)
            #expect(try readFile(scratch.appending("single.copy")) == Array("single".utf8))
            var last: ProgressSnapshot?
            for await snapshot in progress { last = snapshot }
            #expect(last?.isFinal == true)
            #expect(last?.files?.completed == 3)
            // A copier given no totals counts each file once, the tree's as they are submitted.
            #expect(last?.files?.total == 3)
            #expect(last?.totalBytes == Int64(300_005 + 6))
            #expect(last?.fraction == 1.0)
        }
    }

    /// A copier cancelled by another task while a tree's files are in its hands: the tree does
    /// not say it was copied; `copyTree` throws `CancellationError`.
    @Test func aTreeWhoseCopierIsCancelledThrows() async throws {
        try await withScratchDirectory { scratch in
            let source = try Self.makeTree(in: scratch)
            let clock = HeldClock()
            var pipeline = PipelineOptions(capacity: 4)
            pipeline.rateLimit = RateLimiter(bytesPerSecond: 1 << 20, clock: clock)
            let copier = Copier(options: .init(width: 2, chunkSize: 64 << 10, copy: .init(forcesPipeline: true, pipeline: pipeline)))
            var updates = copier.progress.subscribe().makeAsyncIterator()
            let tree = Task { try await copier.copyTree(from: source, to: scratch.appending("t")) }
            // The tree's large file is held after its first chunk: cancel the copier then.
            while let snapshot = await updates.next(), snapshot.bytesCompleted == 0 {}
            copier.cancel()
            await #expect(throws: CancellationError.self) { _ = try await tree.value }
            clock.release()
            _ = await copier.finish()
        }
    }

    /// One options value: the copier's ``Copier/Options/sink`` writes every file it copies, one
    /// submitted on its own and a tree's entries alike (replace, attributes, holes), with no
    /// second home in a job or a tree's options.
    @Test func theCopiersSinkWritesItsFilesAndItsTreesEntries() async throws {
        try await withScratchDirectory { scratch in
            let source = try Self.makeTree(in: scratch)
            let zeros = Array(repeating: UInt8(0x5a), count: 4096) + Array(repeating: 0, count: 2 << 20)
            try writeFile(source.appending("zeros"), zeros)
            let old = [timespec(tv_sec: 1_000_000_000, tv_nsec: 5), timespec(tv_sec: 1_000_000_000, tv_nsec: 5)]
            for name: Pathname in ["sub", "zeros"] { #expect(utimensat(AT_FDCWD, source.appending(name).description, old, 0) == 0) }
            try writeFile(scratch.appending("existing"), Array("stale contents".utf8))
            let copier = Copier(
                options: .init(sink: .init(replacesExisting: true, synchronizes: false, preservesAttributes: true, holes: .always)))
            let single = try await copier.copy(.init(from: .file(scratch.appending("single")), to: .file(scratch.appending("existing"))))
            #expect(single.report.bytesWritten == 6)
            let report = try await copier.copyTree(from: source, to: scratch.appending("t"))
            #expect(report.failures == 0)
            _ = await copier.finish()
            #expect(try readFile(scratch.appending("existing")) == Array("single".utf8))
            let copied = try FileStatus.of(scratch.appending("t/zeros"))
            #expect(copied.modificationTime == FileTime(seconds: 1_000_000_000, nanoseconds: 5))
            #expect(try FileStatus.of(scratch.appending("t/sub")).modificationTime == FileTime(seconds: 1_000_000_000, nanoseconds: 5))
            #expect(try readFile(scratch.appending("t/zeros")) == zeros)
            #expect(copied.allocatedBytes < 1 << 20, "the run of zeros is a hole: \(copied.allocatedBytes) bytes allocated")
        }
    }

    /// A pipeline byte budget in the copier's options bounds each file's channels (within its
    /// share), where a copier used to set it from the share alone.
    @Test func thePipelinesByteBudgetBoundsEachFilesChannels() async {
        let copier = Copier(options: .init(width: 1, chunkSize: 4096, copy: .init(pipeline: .init(byteBudget: 8192))))
        let job = Copier.Job(source: "a", destination: "b", sourceStatus: nil)
        let share = copier.share(of: job, within: 32 << 20)
        #expect(share.capacity * share.chunkSize > 8192)
        #expect(copier.copyOptions(of: job, share: share).pipeline.byteBudget == 8192)
        let unbounded = Copier(options: .init(width: 1, chunkSize: 4096))
        #expect(unbounded.copyOptions(of: job, share: share).pipeline.byteBudget == share.capacity * share.chunkSize)
        _ = await copier.finish()
        _ = await unbounded.finish()
    }

    @Test func aTreeCopiedIntoItselfIsRefusedAndTheCopierGoesOn() async throws {
        try await withScratchDirectory { scratch in
            let source = try Self.makeTree(in: scratch)
            let copier = Copier()
            await #expect(throws: FileError.self) {
                _ = try await copier.copyTree(from: source, to: source.appending("inner"))
            }
            #expect((try? FileStatus.of(source.appending("inner"))) == nil)
            let committed = try await copier.copy(.init(from: .file(scratch.appending("single")), to: .file(scratch.appending("again"))))
            #expect(committed.report.bytesWritten == 6)
            let totals = await copier.finish()
            #expect(totals.committed == 1)
        }
    }

    /// Cancelled before it starts (the hostile order: the walk sees the cancellation before any
    /// file is handed over), a tree copy still cancels its copier, as ``Copier/copy(_:)`` does:
    /// the copier takes no more files.
    @Test func aCancelledTreeCopyCancelsItsCopier() async throws {
        try await withScratchDirectory { scratch in
            let source = try Self.makeTree(in: scratch)
            let copier = Copier()
            let tree = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await copier.copyTree(from: source, to: scratch.appending("t"))
            }
            await #expect(throws: CancellationError.self) { _ = try await tree.value }
            await #expect(throws: CancellationError.self) {
                _ = try await copier.copy(.init(from: .file(scratch.appending("single")), to: .file(scratch.appending("again"))))
            }
            #expect((try? FileStatus.of(scratch.appending("again"))) == nil)
            let totals = await copier.finish()
            #expect(totals.committed == 0)
        }
    }
}
