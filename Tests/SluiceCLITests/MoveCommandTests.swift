#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// `copy --rm` moves, as `mv`: within one file system by a rename (the same inode, both
/// directories synced); across file systems by a durable copy, then the removal by the rule of
/// a move (`MoveRuleTests`); a tree's directories go once empty. Hard-linked, set-ID or sticky
/// sources are kept unless `-f`; `-` is a usage error.
@Suite(.timeLimit(.minutes(2)))
struct MoveCommandTests {
    /// A directory on another file system than the sandbox's (`/dev/shm`, a tmpfs), or `nil`.
    static let otherFileSystem: String? = {
        var shm = stat(), temporary = stat()
        let scratch = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        guard stat("/dev/shm", &shm) == 0, stat(scratch, &temporary) == 0, shm.st_dev != temporary.st_dev,
            access("/dev/shm", W_OK) == 0
        else { return nil }
        return "/dev/shm"
    }()

    @Test func withinOneFileSystemAFileIsRenamed() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("data\n", to: "a")
        let inode = try #require(sandbox.status("a")).st_ino
        let result = try await CLI.run(["copy", "--rm", "-v", "a", "b"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("renamed '"), "\(result.stderr)")
        #expect(!sandbox.exists("a") && sandbox.text("b") == "data\n")
        #expect(sandbox.status("b")?.st_ino == inode)
    }

    @Test func withinOneFileSystemATreeIsRenamedIntoADirectory() async throws {
        let sandbox = try Sandbox()
        try sandbox.makeDirectory("t")
        try sandbox.makeDirectory("t/u")
        try sandbox.write("f\n", to: "t/u/f")
        try sandbox.makeDirectory("into")
        let inode = try #require(sandbox.status("t")).st_ino
        let result = try await CLI.run(["copy", "-a", "--rm", "t", "into"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!sandbox.exists("t") && sandbox.text("into/t/u/f") == "f\n")
        #expect(sandbox.status("into/t")?.st_ino == inode)
    }

    @Test func anExistingDestinationIsRefusedWithoutForceAndReplacedWithIt() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("new\n", to: "a")
        try sandbox.write("old\n", to: "b")
        let refused = try await CLI.run(["copy", "--rm", "a", "b"], in: sandbox)
        #expect(refused.status == 1)
        #expect(sandbox.text("a") == "new\n" && sandbox.text("b") == "old\n")
        let forced = try await CLI.run(["copy", "--rm", "-f", "a", "b"], in: sandbox)
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(!sandbox.exists("a") && sandbox.text("b") == "new\n")
    }

    @Test func aHardLinkedSourceIsKeptUnlessForce() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("data\n", to: "a")
        #expect(link(sandbox.path("a"), sandbox.path("other")) == 0)
        let kept = try await CLI.run(["copy", "--rm", "a", "b"], in: sandbox)
        #expect(kept.status == 2, "\(kept.stderr)")
        #expect(kept.stderr.contains("kept 'a': it has 1 other hard link"), "\(kept.stderr)")
        #expect(sandbox.text("a") == "data\n" && sandbox.text("b") == "data\n")
        let moved = try await CLI.run(["copy", "--rm", "-f", "a", "c"], in: sandbox)
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(!sandbox.exists("a") && sandbox.text("c") == "data\n")
    }

    @Test(arguments: [["copy", "--rm", "-", "out"], ["copy", "--rm", "a", "-"], ["copy", "--rm", "--no-fsync", "a", "out"]])
    func standardStreamsAndNoFsyncAreUsageErrors(arguments: [String]) async throws {
        let sandbox = try Sandbox()
        try sandbox.write("data\n", to: "a")
        let result = try await CLI.run(arguments, in: sandbox)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(sandbox.text("a") == "data\n" && !sandbox.exists("out"))
    }

    @Test(.enabled(if: otherFileSystem != nil, "no writable /dev/shm on another file system than TMPDIR"))
    func acrossFileSystemsAFileIsCopiedThenRemoved() async throws {
        let sandbox = try Sandbox()
        let other = try OtherDirectory()
        defer { other.remove() }
        try sandbox.write("data\n", to: "a")
        let destination = other.appending("a")
        let result = try await CLI.run(["copy", "--rm", "a", destination], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!sandbox.exists("a"))
        #expect(try readAll(destination) == "data\n")
    }

    /// A tree with a symbolic link, a FIFO, two names of one file, and a file with a name
    /// outside the tree: all moved but that file (kept without -f), its directory left.
    @Test(.enabled(if: otherFileSystem != nil, "no writable /dev/shm on another file system than TMPDIR"))
    func acrossFileSystemsATreeIsCopiedThenRemovedOnceEmpty() async throws {
        let sandbox = try Sandbox()
        let other = try OtherDirectory()
        defer { other.remove() }
        let made = try await CLI.shell(
            "mkdir -p t/a/b t/c && echo 1 > t/a/b/f && ln -s f t/a/b/link && mkfifo t/c/fifo && echo 3 > t/h && ln t/h t/h2 "
                + "&& echo 4 > t/c/x && ln t/c/x outside", in: sandbox)
        try #require(made.status == 0, "\(made.stderr)")
        let result = try await CLI.run(["copy", "-a", "--rm", "t", other.appending("t")], in: sandbox)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("kept 't/c/x': it has 1 other hard link"), "\(result.stderr)")
        let left = try await CLI.shell("find t | sort | tr '\\n' ' '", in: sandbox)
        #expect(left.stdout == Array("t t/c t/c/x ".utf8), "\(String(decoding: left.stdout, as: UTF8.self))")
        #expect(try readAll(other.appending("t/a/b/f")) == "1\n")
        #expect(try readAll(other.appending("t/h2")) == "3\n")
    }

    private func readAll(_ path: String) throws -> String {
        String(decoding: try #require(FileManager.default.contents(atPath: path)), as: UTF8.self)
    }

    /// A new directory on the other file system, removed with all in it.
    struct OtherDirectory {
        let path: String

        init() throws {
            path = "\(MoveCommandTests.otherFileSystem!)/sluice-move-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }

        func appending(_ name: String) -> String { path + "/" + name }

        func remove() { try? FileManager.default.removeItem(atPath: path) }
    }
}
