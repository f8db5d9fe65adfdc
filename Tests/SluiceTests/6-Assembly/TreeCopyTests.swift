#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Sluice
import SluiceTestSupport
import Testing

/// ``TreeCopy`` through its seam: a runner that only queues jobs and runs them all in
/// ``FileJobRunner/waitForAll()`` (as an engine may), so directory attributes and hard links
/// must come after every job.
@Suite struct TreeCopyTests {
    /// Queues every job; runs them, in reverse order, only when asked to wait.
    final class DeferringRunner: FileJobRunner, @unchecked Sendable {
        private let queued = LockedValue<[(FileJob, @Sendable (Result<CopyReport, any Error>) -> Void)]>([])
        var count: Int { queued.withLock { $0.count } }

        func submit(_ job: FileJob, completion: @escaping @Sendable (Result<CopyReport, any Error>) -> Void) async throws {
            queued.withLock { $0.append((job, completion)) }
        }

        func waitForAll() async {
            let jobs = queued.withLock { list in
                defer { list.removeAll() }
                return list
            }
            for (job, completion) in jobs.reversed() {
                do { completion(.success(try await job.run(gate: CommitGate()))) } catch { completion(.failure(error)) }
            }
        }
    }

    @Test func directoryTimesAndHardLinksComeAfterJobsThatCompleteLate() async throws {
        try await withScratchDirectory { scratch in
            let source = scratch.appending("s")
            let handle = try DirectoryHandle.open(scratch.path)
            try handle.makeDirectory("s", permissions: 0o755)
            let tree = try handle.openDirectory("s")
            try tree.makeDirectory("sub", permissions: 0o755)
            try writeFile(source.appending("sub/a"), Array("alpha".utf8))
            try writeFile(source.appending("b"), Array("beta".utf8))
            let sub = try tree.openDirectory("sub")
            try sub.makeHardLink("again", to: "a", in: sub)
            let old = FileTime(seconds: 1_234_567_890, nanoseconds: 987_654_321)
            try tree.setTimes(of: "sub", access: old, modification: old)
            try sub.setPermissions(of: ".", to: 0o555)

            let runner = DeferringRunner()
            let failures = LockedValue<[String]>([])
            let copy = TreeCopy(
                from: source, to: scratch.appending("t"),
                options: .init(preservesAttributes: true, keepsHardLinks: true, sink: .init(synchronize: false)), runner: runner)
            let report = try await copy.run { error in failures.withLock { $0.append("\(error)") } }
            #expect(failures.withLock { $0 } == [])
            #expect(report.files == 2)
            #expect(report.hardLinks == 1)
            #expect(runner.count == 0)
            let target = try DirectoryHandle.open(scratch.appending("t"))
            let copied = try target.status(of: "sub")
            #expect(copied.modificationTime == old)
            #expect(copied.permissions == 0o555)
            let copiedSub = try target.openDirectory("sub")
            #expect(try copiedSub.status(of: "again").isSameFile(as: try copiedSub.status(of: "a")))
            #expect(try readFile(scratch.appending("t/sub/a")) == Array("alpha".utf8))
            #expect(try readFile(scratch.appending("t/b")) == Array("beta".utf8))
            #expect(chmod(scratch.appending("t/sub").description, 0o755) == 0)
            #expect(chmod(source.appending("sub").description, 0o755) == 0)
        }
    }

    @Test func intoItselfIsRefusedBeforeAnythingIsCreated() async throws {
        try await withScratchDirectory { scratch in
            let handle = try DirectoryHandle.open(scratch.path)
            try handle.makeDirectory("s", permissions: 0o755)
            try handle.openDirectory("s").makeDirectory("inner", permissions: 0o755)
            let copy = TreeCopy(from: scratch.appending("s"), to: scratch.appending("s/inner/t"))
            await #expect(throws: FileError.self) { _ = try await copy.run() }
            #expect(try entries(in: scratch.appending("s/inner")) == [])
        }
    }

    /// Copies `source` to `destination` following every link (`-L`), one file at a time.
    /// - Returns: the report and the failures' messages.
    static func copyFollowingLinks(_ source: FilePath, to destination: FilePath) async throws -> (TreeCopyReport, [String]) {
        let failures = LockedValue<[String]>([])
        let copy = TreeCopy(from: source, to: destination, options: .init(links: .all, sink: .init(synchronize: false)))
        let report = try await copy.run { error in failures.withLock { $0.append("\(error)") } }
        return (report, failures.withLock { $0 })
    }

    /// `-L` and a link to the destination's directory (`s/up -> ../d`, copied into `d`): the
    /// link is refused as a copy into itself; what else is in the tree is copied.
    @Test(.timeLimit(.minutes(1)))
    func aLinkToTheDestinationsParentIsNotFollowed() async throws {
        try await withScratchDirectory { scratch in
            let handle = try DirectoryHandle.open(scratch.path)
            try handle.makeDirectory("s", permissions: 0o755)
            try handle.makeDirectory("d", permissions: 0o755)
            try writeFile(scratch.appending("s/f"), Array("kept".utf8))
            #expect(symlink("../d", scratch.appending("s/up").description) == 0)
            let (report, failures) = try await Self.copyFollowingLinks(scratch.appending("s"), to: scratch.appending("d"))
            #expect(failures.count == 1)
            #expect(failures.first?.hasSuffix(
                "cannot copy a directory, '\(scratch.appending("s/up"))', into itself, '\(scratch.appending("d"))'") == true,
                "\(failures)")
            #expect(report.failures == 1)
            #expect(try readFile(scratch.appending("d/s/f")) == Array("kept".utf8))
            #expect(try entries(in: scratch.appending("d/s")).map(\.description).sorted() == ["f"])
        }
    }

    /// `-L` and a link to a directory the copy itself makes (`s/back -> ../t`, copied to a new
    /// `t`): refused, as the copy's own directory.
    @Test(.timeLimit(.minutes(1)))
    func aLinkToADirectoryTheCopyMadeIsNotFollowed() async throws {
        try await withScratchDirectory { scratch in
            let handle = try DirectoryHandle.open(scratch.path)
            try handle.makeDirectory("s", permissions: 0o755)
            try writeFile(scratch.appending("s/f"), Array("kept".utf8))
            #expect(symlink("../t", scratch.appending("s/back").description) == 0)
            let (report, failures) = try await Self.copyFollowingLinks(scratch.appending("s"), to: scratch.appending("t"))
            #expect(failures.count == 1)
            #expect(failures.first?.hasSuffix(
                "cannot copy a directory, '\(scratch.appending("s/back"))', into itself, '\(scratch.appending("t"))'") == true,
                "\(failures)")
            #expect(report.failures == 1)
            #expect(report.directories == 1)
            #expect(try readFile(scratch.appending("t/f")) == Array("kept".utf8))
            #expect(try entries(in: scratch.appending("t")).map(\.description).sorted() == ["f"])
        }
    }

    @Test func theTargetFollowsCpsRule() async throws {
        try await withScratchDirectory { scratch in
            let handle = try DirectoryHandle.open(scratch.path)
            try handle.makeDirectory("existing", permissions: 0o755)
            #expect(TreeCopy.target(source: "a/tree/", destination: scratch.appending("existing"))
                == scratch.appending("existing/tree"))
            #expect(TreeCopy.target(source: "a/tree", destination: scratch.appending("new")) == scratch.appending("new"))
        }
    }
}
