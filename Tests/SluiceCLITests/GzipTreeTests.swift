#if canImport(Glibc)
import Glibc
#endif
import SluiceTestSupport
import Testing

/// `compress -r` and `decompress -r`, as `gzip -r`: every regular file of a tree, in place,
/// each by the single-file rules; names that do not fit passed over, silently unless -v.
@Suite(.timeLimit(.minutes(3)))
struct GzipTreeTests {
    static let files = ["a.txt", "d/b.txt", "d/e/c.bin", "d/e/f/deep.txt"]

    /// A tree with ``files``, a file already compressed and a symbolic link.
    static func makeTree(in sandbox: Sandbox) async throws {
        for directory in ["d", "d/e", "d/e/f"] { try sandbox.makeDirectory(directory) }
        for (index, name) in files.enumerated() { try sandbox.write(mixedData(count: 10_000 + index * 70_000), to: name) }
        try await writeWithGzip(pattern(count: 5000), to: "d/old", in: sandbox)
        unlink(sandbox.path("d/old"))
        try sandbox.makeSymbolicLink("d/link", to: "b.txt")
    }

    @Test func compressAndDecompressEveryFileOfATree() async throws {
        let sandbox = try Sandbox()
        try await Self.makeTree(in: sandbox)
        let originals = Self.files.map { sandbox.contents($0) }
        let old = sandbox.contents("d/old.gz")

        let compressed = try await CLI.run(["compress", "-r", "a.txt", "d"], in: sandbox)
        #expect(compressed.status == 0, "\(compressed.stderr)")
        #expect(compressed.stderr.isEmpty, "passed over silently without -v: \(compressed.stderr)")
        for name in Self.files {
            #expect(sandbox.exists(name), "the sources stay without --rm")
            let gunzip = try await CLI.shell("gzip -dc '\(name).gz' | cmp - '\(name)'", in: sandbox)
            #expect(gunzip.status == 0, "\(name).gz decodes to \(name) with gzip -d")
        }
        #expect(sandbox.contents("d/old.gz") == old)
        #expect(!sandbox.exists("d/old.gz.gz"))
        #expect(!sandbox.exists("d/link.gz"), "a symbolic link is not followed")

        for name in Self.files { unlink(sandbox.path(name)) }
        let decompressed = try await CLI.run(["decompress", "-r", "-v", "d", "a.txt.gz"], in: sandbox)
        #expect(decompressed.status == 0, "\(decompressed.stderr)")
        #expect(Self.files.map { sandbox.contents($0) } == originals)
        #expect(sandbox.contents("d/old") == pattern(count: 5000))
        #expect(decompressed.stderr.contains("decompress 'd/link': not a regular file -- passed over"), "\(decompressed.stderr)")
    }

    @Test func verboseNamesWhatIsPassedOver() async throws {
        let sandbox = try Sandbox()
        try await Self.makeTree(in: sandbox)
        let result = try await CLI.run(["compress", "-r", "-v", "d"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("compress 'd/old.gz': already has the .gz suffix -- passed over"), "\(result.stderr)")
        #expect(result.stderr.contains("compress 'd/link': not a regular file -- passed over"), "\(result.stderr)")
    }

    @Test(arguments: [
        (["compress", "-r", "-o", "x.gz", "d"], "-r writes each file beside its source: it cannot be used with -o"),
        (["decompress", "-r", "-l", "d"], "--list lists files: it cannot be used with -r"),
    ])
    func usageErrors(_ arguments: [String], _ message: String) async throws {
        let sandbox = try Sandbox()
        try sandbox.makeDirectory("d")
        let result = try await CLI.run(arguments, in: sandbox)
        #expect(result.status == 64)
        #expect(result.stderrLines.first == "Error: " + message)
    }
}
