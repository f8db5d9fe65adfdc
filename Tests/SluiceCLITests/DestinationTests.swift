#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// C11: copying a file onto itself, by every kind of alias.
@Suite(.timeLimit(.minutes(3)))
struct SameFileTests {
    /// `f.txt`, `link` -> `f.txt`, the hard link `hard`, and `d/f.txt` -> `../f.txt`.
    static func makeAliases() throws -> Sandbox {
        let sandbox = try Sandbox()
        try sandbox.write("precious\n", to: "f.txt")
        try sandbox.makeSymbolicLink("link", to: "f.txt")
        try sandbox.makeHardLink("hard", to: "f.txt")
        try sandbox.makeDirectory("d")
        try sandbox.makeSymbolicLink("d/f.txt", to: "../f.txt")
        return sandbox
    }

    @Test(arguments: ["f.txt", "link", "hard", "d/f.txt", "./f.txt", "d/../f.txt"], [false, true])
    func copyOntoItselfIsRefused(destination: String, force: Bool) async throws {
        let sandbox = try Self.makeAliases()
        let before = sandbox.listing()
        let result = try await CLI.run(["copy"] + (force ? ["--force"] : []) + ["f.txt", destination], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr.contains("same file"), "\(result.stderr)")
        #expect(sandbox.text("f.txt") == "precious\n")
        #expect(sandbox.status("f.txt")?.st_nlink == 2)
        #expect(sandbox.status("hard")?.st_nlink == 2)
        #expect(sandbox.status("link").map { $0.st_mode & S_IFMT } == S_IFLNK)
        #expect(sandbox.status("d/f.txt").map { $0.st_mode & S_IFMT } == S_IFLNK)
        #expect(sandbox.listing() == before)
        #expect(sandbox.leftovers().isEmpty && sandbox.leftovers("d").isEmpty)
    }

    @Test func copyIntoItsOwnDirectoryIsRefused() async throws {
        let sandbox = try Self.makeAliases()
        let result = try await CLI.run(["copy", "--force", "f.txt", "."], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr.contains("same file"))
        #expect(sandbox.text("f.txt") == "precious\n")
        #expect(sandbox.leftovers().isEmpty)
    }
}

/// C20: awkward destinations.
@Suite(.timeLimit(.minutes(3)))
struct AwkwardDestinationTests {
    @Test func directoryDestinationReceivesTheSourceByName() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("data\n", to: "src")
        try sandbox.makeDirectory("dstdir")
        let result = try await CLI.run(["copy", "src", "dstdir"], in: sandbox)
        #expect(result.status == 0)
        #expect(sandbox.text("dstdir/src") == "data\n")
        #expect(sandbox.listing("dstdir") == ["src"])
    }

    @Test(arguments: [false, true])
    func directoryInTheWayIsAnErrorAndNothingIsRemoved(force: Bool) async throws {
        let sandbox = try Sandbox()
        try sandbox.write("data\n", to: "src")
        try sandbox.makeDirectory("dstdir")
        try sandbox.makeDirectory("dstdir/src")
        try sandbox.write("keep\n", to: "dstdir/src/inner")
        let result = try await CLI.run(["copy"] + (force ? ["-f"] : []) + ["src", "dstdir"], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr.contains("dstdir/src"))
        #expect(sandbox.status("dstdir/src").map { $0.st_mode & S_IFMT } == S_IFDIR)
        #expect(sandbox.text("dstdir/src/inner") == "keep\n")
        #expect(sandbox.listing("dstdir") == ["src"])
    }

    @Test func danglingSymlinkDestinationIsRefusedWithoutForce() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("data\n", to: "src")
        try sandbox.makeSymbolicLink("dangling", to: "target")
        let result = try await CLI.run(["copy", "src", "dangling"], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr.contains("'dangling'"))
        #expect(!sandbox.exists("target"))
        #expect(sandbox.status("dangling").map { $0.st_mode & S_IFMT } == S_IFLNK)
        #expect(sandbox.leftovers().isEmpty)
    }

    @Test func danglingSymlinkDestinationIsReplacedNotWrittenThroughWithForce() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("data\n", to: "src")
        try sandbox.makeSymbolicLink("dangling", to: "target")
        let result = try await CLI.run(["copy", "--force", "src", "dangling"], in: sandbox)
        #expect(result.status == 0)
        #expect(!sandbox.exists("target"))
        #expect(sandbox.status("dangling").map { $0.st_mode & S_IFMT } == S_IFREG)
        #expect(sandbox.text("dangling") == "data\n")
    }

    @Test func symlinkSourceIsFollowed() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("data\n", to: "real")
        try sandbox.makeSymbolicLink("alias", to: "real")
        let result = try await CLI.run(["copy", "alias", "copy"], in: sandbox)
        #expect(result.status == 0)
        #expect(sandbox.status("copy").map { $0.st_mode & S_IFMT } == S_IFREG)
        #expect(sandbox.text("copy") == "data\n")
    }
}

/// C22: destinations that are not regular files are written in place.
@Suite(.timeLimit(.minutes(3)))
struct SpecialDestinationTests {
    @Test(arguments: [false, true])
    func devNullIsWrittenInPlace(force: Bool) async throws {
        let sandbox = try Sandbox()
        try sandbox.write(pattern(count: 100_000), to: "f")
        let result = try await CLI.run(["copy"] + (force ? ["--force"] : []) + ["f", "/dev/null"], in: sandbox)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        var status = stat()
        #expect(lstat("/dev/null", &status) == 0)
        #expect(status.st_mode & S_IFMT == S_IFCHR)
    }

    @Test(arguments: [false, true])
    func fifoWithAReaderIsWrittenInPlace(force: Bool) async throws {
        let sandbox = try Sandbox()
        let data = pattern(count: 300_000)
        try sandbox.write(data, to: "f")
        try sandbox.makeFIFO("fifo")
        // The reader is started first; the shell's `cat` opens the FIFO, waiting for a writer.
        async let reader = CLI.shell("cat fifo > out", in: sandbox)
        let result = try await CLI.run(["copy"] + (force ? ["--force"] : []) + ["f", "fifo"], in: sandbox)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        let catResult = try await reader
        #expect(catResult.status == 0)
        #expect(sandbox.contents("out") == data)
        #expect(sandbox.status("fifo").map { $0.st_mode & S_IFMT } == S_IFIFO)
        #expect(sandbox.leftovers().isEmpty)
    }
}

/// C13: files whose size says nothing about their content.
@Suite(.timeLimit(.minutes(3)))
struct LyingSizeTests {
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/version"), "/proc/version is missing"))
    func procVersionIsCopiedWhole() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.run(["copy", "/proc/version", "version"], in: sandbox)
        #expect(result.status == 0)
        let expected = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "/proc/version")))
        #expect(!expected.isEmpty)
        #expect(sandbox.contents("version") == expected)
    }

    @Test(.enabled(
        if: FileManager.default.fileExists(atPath: "/sys/class/net/lo/address"),
        "/sys/class/net/lo/address is missing (no sysfs or no loopback interface)"))
    func sysfsAddressIsExactly18Bytes() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.run(["copy", "/sys/class/net/lo/address", "address"], in: sandbox)
        #expect(result.status == 0)
        let copy = try #require(sandbox.contents("address"))
        #expect(copy.count == 18)
        #expect(copy == (try [UInt8](Data(contentsOf: URL(fileURLWithPath: "/sys/class/net/lo/address")))))
    }
}
