#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Sluice
import SluiceTestSupport

/// The commit in steps: a sink that leaves its directory to a batch syncs its data only, and the
/// batch syncs each directory once.
@Suite struct DirectorySyncBatchTests {
    /// Counts `fsync(2)` calls through the system-call seam.
    final class FsyncCounter: @unchecked Sendable {
        let count = LockedValue(0)
        var system: SystemCalls {
            SystemCalls(read: SystemCalls.live.read, write: SystemCalls.live.write, fsync: { descriptor in
                self.count.withLock { $0 += 1 }
                return SystemCalls.live.fsync(descriptor)
            })
        }
    }

    @Test func aSinkLeavingItsDirectoryToTheBatchSyncsOnlyItsData() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let counter = FsyncCounter()
        var options = FileSink.Options()
        options.synchronizesDirectory = false
        let sink = try await FileSink.create(
            at: FileLocation(path: directory.appending("out")), source: nil, options: options, system: counter.system)
        try await sink.write(Chunk([1, 2, 3]))
        try await sink.commit()
        #expect(counter.count.withLock { $0 } == 1)
        #expect(try readFile(directory.appending("out")) == [1, 2, 3])
        // Durable only once the caller has synced the directory.
        #expect(await sink.isDurablyCommitted == false)

        let whole = try await FileSink.create(at: FileLocation(path: directory.appending("other")), source: nil, options: .init(), system: counter.system)
        try await whole.write(Chunk([4]))
        try await whole.commit()
        #expect(counter.count.withLock { $0 } == 3)
        #expect(await whole.isDurablyCommitted)
    }

    @Test func eachDirectoryIsSyncedOnceAndAFailureIsReturned() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let counter = FsyncCounter()
        let batch = DirectorySyncBatch(system: counter.system)
        for _ in 0..<5 { batch.record(directory.path) }
        batch.record(directory.appending("missing"))
        #expect(batch.pendingCount == 2)
        let failures = batch.synchronize()
        #expect(counter.count.withLock { $0 } == 1)
        #expect(failures.keys.map(\.description) == [directory.appending("missing").description])
        #expect(failures.values.first?.errno == .noSuchFileOrDirectory)
        #expect(batch.pendingCount == 0)
    }
}
