#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Sluice
import SluiceTestSupport

/// A source that changes while it is read is reported (C54): the copier compares its status at
/// the open with its status after the last read (size, modification time, status change time,
/// to the nanosecond), on every route a file takes, and a change is a warning in the copy's
/// report; the copy holds what was read. The change is made through the system-call seam: every
/// `fstat(2)` of the source after its first answers one nanosecond later.
@Suite(.timeLimit(.minutes(2)))
struct SourceChangeTests {
    enum Route: String, CaseIterable, Sendable {
        /// One chunk or less: one step, no pipeline.
        case smallFile
        /// The kernel's copy (or reads and writes where it cannot).
        case regularFile
        /// Through the pipeline, chunk by chunk.
        case pipeline
        /// Through a transform (gzip).
        case transform
    }

    /// System calls whose `fstat(2)` of the file with inode `inode` answers a modification time
    /// one nanosecond later from its second call on.
    static func touching(inode: UInt64) -> SystemCalls {
        let calls = LockedValue(0)
        var system = SystemCalls.live
        system.status = { descriptor in
            SystemCalls.liveStatus(descriptor).map { raw in
                guard UInt64(raw.st_ino) == inode, calls.withLock({ $0 += 1; return $0 }) > 1 else { return raw }
                var changed = raw
                changed.st_mtim.tv_nsec = (changed.st_mtim.tv_nsec + 1) % 1_000_000_000
                return changed
            }
        }
        return system
    }

    func copy(_ route: Route, changing: Bool) async throws -> Copier.Committed {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let source = directory.appending("source")
        try writeFile(source, (0..<(route == .smallFile ? 10_000 : 300_000)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let status = try FileStatus.of(source)
        let system = changing ? Self.touching(inode: status.inode) : .live
        var options = Copier.Options(width: 1, chunkSize: 64 << 10)
        options.copy.forcesPipeline = route == .pipeline
        let engine = Copier(options: options, progress: ManyFilesProgress(), ownsProgress: true, system: system)
        let result = LockedValue<Result<Copier.Committed, any Error>?>(nil)
        let transform: TransformFactory? = route == .transform ? { @Sendable in try GzipEncoder() as any ChunkTransform } : nil
        _ = try await engine.submit(.init(
            source: source, destination: directory.appending("copy"), sourceStatus: status, transform: transform,
            completion: { outcome in result.withLock { $0 = outcome.result } }))
        _ = await engine.finish()
        return try #require(result.withLock { $0 }).get()
    }

    @Test(arguments: Route.allCases)
    func aChangeWhileReadIsAWarning(route: Route) async throws {
        let changed = try await copy(route, changing: true)
        #expect(changed.report.warnings.map(\.message) == ["file changed as we read it (modification time)"], "\(changed.report)")
        #expect(changed.report.sourceStatus != nil)
        let unchanged = try await copy(route, changing: false)
        #expect(unchanged.report.warnings.isEmpty, "\(unchanged.report.warnings)")
    }
}
