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

    /// Issue 55: `-r` streams: the walk runs ahead of the copies by a bounded channel, so the
    /// totals grow while it finds files (as `copy -r`'s do) instead of being every path held
    /// in memory before the first file starts. 400 files: when the first is done, the total
    /// counts far fewer than all, and says it grows; the last line counts them all.
    @Test func theWalkStreamsItsFilesAndTheTotalGrows() async throws {
        let sandbox = try Sandbox()
        for directory in ["t", "t/a", "t/b"] { try sandbox.makeDirectory(directory) }
        for index in 0..<400 { try sandbox.write("file \(index)\n", to: "t/\(index % 2 == 0 ? "a" : "b")/f\(index)") }
        let result = try await CLI.run(["compress", "-r", "--no-fsync", "--progress=json", "t"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try result.stderrLines.filter { $0.hasPrefix("{") }.map(ProgressLine.init)
        let first = try #require(lines.first)
        let total = try #require(first.integer("totalFiles"))
        #expect(total < 400, "the first file's line counts \(total) of 400: the walk ran ahead of it")
        #expect(first.object["totalGrowing"] as? Bool == true, "\(first.text)")
        let last = try #require(lines.last)
        #expect(last.isDone && last.integer("totalFiles") == 400 && last.integer("filesCommitted") == 400, "\(last.text)")
        #expect(sandbox.exists("t/a/f398.gz") && sandbox.exists("t/b/f399.gz"))
    }

    /// The totals of `-r` are complete once the walk ends, and only then: not when a segment
    /// ends mid-walk (a second file decompressed to the same name as an earlier one, `x.tgz`
    /// after `x.tar.gz`, waits for it), which would make the fraction fall as the walk goes on;
    /// and also with `-t` or `-c`, where no engine ends a segment.
    @Test(arguments: [[String](), ["-t"], ["-c"]])
    func theTotalsAreCompleteOnceTheWalkEnds(extra: [String]) async throws {
        let sandbox = try Sandbox()
        let made = try await CLI.shell(
            "for i in 0 1 2 3 4 5 6 7; do mkdir -p t/d$i && echo x$i > t/d$i/x.tar && echo y$i > t/d$i/y && gzip t/d$i/y"
                + " && gzip -k t/d$i/x.tar && mv t/d$i/x.tar.gz t/d$i/x.tgz && gzip t/d$i/x.tar; done", in: sandbox)
        try #require(made.status == 0, "\(made.stderr)")
        let result = try await CLI.run(["decompress", "-r", "--no-fsync", "--progress=json"] + extra + ["t"], in: sandbox)
        #expect(result.status == (extra.isEmpty ? 1 : 0), "\(result.stderr)")
        let lines = try result.stderrLines.filter { $0.hasPrefix("{") }.map(ProgressLine.init)
        var fraction = 0.0
        var complete = false
        for line in lines {
            if let now = line.fraction {
                #expect(now >= fraction, "the fraction fell: \(line.text)")
                fraction = now
            }
            if complete { #expect(line.integer("totalFiles") == 24, "the total grew once complete: \(line.text)") }
            complete = complete || line.object["totalGrowing"] as? Bool == false
        }
        let last = try #require(lines.last)
        #expect(last.isDone && last.integer("totalFiles") == 24 && last.object["totalGrowing"] as? Bool == false, "\(last.text)")
    }

    /// The walk of `-r` runs beside the files in flight within the descriptors the process
    /// allows, as a tree copy's does: under `ulimit -n` 12, a tree 12 directories deep is
    /// compressed whole.
    @Test func theWalkKeepsWithinALowLimitOnOpenFiles() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(
            """
            command -v prlimit >/dev/null || { echo "prlimit is not installed" > skipped; exit 0; }
            p=t; for i in $(seq 1 12); do p=$p/d$i; done; mkdir -p $p
            for i in $(seq 1 60); do d=t; for j in $(seq 1 $((i % 12))); do d=$d/d$j; done; echo "file $i" > $d/f$i; done
            prlimit --nofile=12 "$SLUICE" compress -r --no-fsync t && find t -name '*.gz' | wc -l > count
            """, in: sandbox)
        if let reason = sandbox.text("skipped") { try Test.cancel(Comment(rawValue: reason)) }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.text("count") == "60\n", "\(result.stderr)")
    }
}
