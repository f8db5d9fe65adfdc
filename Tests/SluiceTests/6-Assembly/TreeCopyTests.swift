#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Sluice
import SluiceTestSupport
import Testing

/// A tree copied by ``Copier/copyTree(from:to:options:onOutcome:onFailure:)``: its files are
/// jobs of the copier that complete on the copier's threads, in any order, after the walk
/// handed them over, so directory attributes and hard links must come after every job.
@Suite(.timeLimit(.minutes(2))) struct TreeCopyTests {
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

            let result = try await copyTreeWithCopier(
                source, to: scratch.appending("t"), tree: .init(keepsHardLinks: true),
                options: .init(width: 2, sink: .init(synchronizes: false, preservesAttributes: true)))
            #expect(result.failures == [])
            #expect(result.report.files == 2)
            #expect(result.report.hardLinks == 1)
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
            await #expect(throws: FileError.self) { _ = try await copyTreeWithCopier(scratch.appending("s"), to: scratch.appending("s/inner/t")) }
            #expect(try entries(in: scratch.appending("s/inner")) == [])
        }
    }

    /// `-L` and a link back into the copy: to the destination's directory (`s/up -> ../d`,
    /// copied into the existing `d`), or to the directory the copy makes (`s/up -> ../t`,
    /// copied to a new `t`). The link is refused as a copy into itself, the one failure; the
    /// rest of the tree is copied.
    @Test(.timeLimit(.minutes(3)), arguments: [("d", "d/s"), ("t", "t")])
    func aLinkBackIntoTheCopyIsNotFollowed(_ linked: String, _ copied: String) async throws {
        try await withScratchDirectory { scratch in
            let handle = try DirectoryHandle.open(scratch.path)
            try handle.makeDirectory("s", permissions: 0o755)
            if linked != copied { try handle.makeDirectory(Pathname(linked), permissions: 0o755) }
            try writeFile(scratch.appending("s/f"), Array("kept".utf8))
            #expect(symlink("../\(linked)", scratch.appending("s/up").description) == 0)
            let result = try await copyTreeWithCopier(
                scratch.appending("s"), to: scratch.appending(Pathname(linked)), tree: .init(links: .all),
                options: .init(sink: .init(synchronizes: false)))
            let (report, messages) = (result.report, result.failures)
            #expect(messages.count == 1)
            #expect(messages.first?.hasSuffix(
                "cannot copy a directory, '\(scratch.appending("s/up"))', into itself, '\(scratch.appending(Pathname(linked)))'") == true,
                "\(messages)")
            #expect(report.failures == 1)
            #expect(try readFile(scratch.appending(Pathname(copied)).appending("f")) == Array("kept".utf8))
            #expect(try entries(in: scratch.appending(Pathname(copied))).map(\.description) == ["f"])
        }
    }

    @Test func theTargetFollowsCpsRule() async throws {
        try await withScratchDirectory { scratch in
            let handle = try DirectoryHandle.open(scratch.path)
            try handle.makeDirectory("existing", permissions: 0o755)
            #expect(Copier.treeTarget(source: "a/tree/", destination: scratch.appending("existing"))
                == scratch.appending("existing/tree"))
            #expect(Copier.treeTarget(source: "a/tree", destination: scratch.appending("new")) == scratch.appending("new"))
        }
    }
}
