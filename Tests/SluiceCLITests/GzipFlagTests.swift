#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// gzip's everyday flags on `compress` and `decompress`, each run by `sluice` and by `gzip` on
/// the same input: the same exit status, output name and, where they must match, output bytes
/// (deflate's bytes differ between zlib and gzip's own encoder; what they decode to must not).
@Suite(.timeLimit(.minutes(3)), .enabled(if: Tool.gzip != nil, "gzip is not installed"))
struct GzipFlagTests {
    /// `sluice` and `gzip` each in a directory of their own, on the same files.
    struct Pair {
        let sluice: Sandbox
        let gzip: Sandbox

        init(files: [String: [UInt8]]) throws {
            sluice = try Sandbox()
            gzip = try Sandbox()
            for (name, bytes) in files {
                try sluice.write(bytes, to: name)
                try gzip.write(bytes, to: name)
            }
        }

        /// Runs `sluice ARGUMENTS` and `gzip GZIP` in their directories.
        func run(_ arguments: [String], gzip command: String) async throws -> (sluice: CLIResult, gzip: CLIResult) {
            (try await CLI.run(arguments, in: sluice), try await CLI.shell(command, in: gzip))
        }

        /// The names in each directory, sorted.
        var listings: (sluice: [String], gzip: [String]) {
            (sluice.listing().sorted(), gzip.listing().sorted())
        }
    }

    static let data = mixedData(count: 100_000)

    @Test func keepIsAcceptedAndKeepsTheSource() async throws {
        let pair = try Pair(files: ["x": Self.data])
        let compressed = try await pair.run(["compress", "-k", "x"], gzip: "gzip -k x")
        #expect(compressed.sluice.status == 0 && compressed.gzip.status == 0, "\(compressed.sluice.stderr)")
        #expect(pair.listings.sluice == ["x", "x.gz"] && pair.listings.gzip == ["x", "x.gz"])
        unlink(pair.sluice.path("x"))
        unlink(pair.gzip.path("x"))
        let decompressed = try await pair.run(["decompress", "--keep", "x.gz"], gzip: "gzip -d --keep x.gz")
        #expect(decompressed.sluice.status == 0 && decompressed.gzip.status == 0, "\(decompressed.sluice.stderr)")
        #expect(pair.listings.sluice == ["x", "x.gz"] && pair.listings.gzip == ["x", "x.gz"])
        #expect(pair.sluice.contents("x") == Self.data && pair.gzip.contents("x") == Self.data)
    }

    @Test func dashDOnCompressDecompresses() async throws {
        let pair = try Pair(files: [:])
        for sandbox in [pair.sluice, pair.gzip] { try await writeWithGzip(Self.data, to: "x", in: sandbox) }
        unlink(pair.sluice.path("x"))
        unlink(pair.gzip.path("x"))
        let result = try await pair.run(["compress", "-d", "x.gz"], gzip: "gzip -d -k x.gz")
        #expect(result.sluice.status == 0 && result.gzip.status == 0, "\(result.sluice.stderr)")
        #expect(pair.listings.sluice == pair.listings.gzip)
        #expect(pair.sluice.contents("x") == pair.gzip.contents("x"))
        #expect(pair.sluice.contents("x") == Self.data)
        // Clustered and long, with an option only decompress takes.
        let tested = try await pair.run(["compress", "-dt", "x.gz"], gzip: "gzip -dt x.gz")
        #expect(tested.sluice.status == 0 && tested.gzip.status == 0, "\(tested.sluice.stderr)")
        let long = try await CLI.run(["compress", "--decompress", "-c", "x.gz"], in: pair.sluice)
        #expect(long.status == 0 && long.stdout == Self.data)
        // Its usage errors are decompress's.
        let bad = try await CLI.run(["compress", "-d", "--bogus", "x.gz"], in: pair.sluice)
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("Usage: sluice decompress "), "\(bad.stderr)")
    }

    /// `--fast` and `--best` are `-1` and `-9`, with the last of them winning, and the header's
    /// XFL says so as gzip's does (4 for the fastest, 2 for the best).
    @Test func fastAndBestAreLevelsOneAndNine() async throws {
        let pair = try Pair(files: ["x": Self.data])
        var outputs: [String: [UInt8]] = [:]
        for level in ["--fast", "-1", "--best", "-9", "--fast --best", "--best -1"] {
            let result = try await CLI.run(["compress"] + level.split(separator: " ").map(String.init) + ["-c", "x"], in: pair.sluice)
            #expect(result.status == 0, "\(result.stderr)")
            outputs[level] = result.stdout
        }
        #expect(outputs["--fast"] == outputs["-1"] && outputs["--best -1"] == outputs["-1"])
        #expect(outputs["--best"] == outputs["-9"] && outputs["--fast --best"] == outputs["-9"])
        #expect(outputs["--fast"] != outputs["--best"])
        for (flag, xfl) in [("--fast", UInt8(4)), ("--best", 2)] {
            let gzip = try await CLI.shell("gzip -n \(flag) -c x > x-\(flag).gz", in: pair.gzip)
            #expect(gzip.status == 0)
            let gzipped = try #require(pair.gzip.contents("x-\(flag).gz"))
            #expect(gzipped[8] == xfl && outputs[flag]?[8] == xfl, "\(flag)")
            try pair.gzip.write(outputs[flag] ?? [], to: "from-sluice.gz")
            let decoded = try await CLI.shell("gzip -dc from-sluice.gz | cmp - x", in: pair.gzip)
            #expect(decoded.status == 0, "\(decoded.stderr)")
        }
        // decompress takes no level, as before.
        #expect(try await CLI.run(["decompress", "--fast", "x.gz"], in: pair.sluice).status == 64)
    }

    /// `-n` asks for what Sluice always does: no name and no time in the header, as `gzip -n`.
    @Test func noNameIsAcceptedAndIsTheDefault() async throws {
        let pair = try Pair(files: ["x": Self.data])
        let result = try await pair.run(["compress", "-n", "x"], gzip: "gzip -n -k x")
        #expect(result.sluice.status == 0 && result.gzip.status == 0, "\(result.sluice.stderr)")
        #expect(pair.listings.sluice == pair.listings.gzip)
        let ours = try #require(pair.sluice.contents("x.gz"))
        let theirs = try #require(pair.gzip.contents("x.gz"))
        // FLG (no FNAME) and MTIME (0) as gzip -n writes them.
        #expect(Array(ours[3..<8]) == Array(theirs[3..<8]))
        #expect(Array(ours[3..<8]) == [0, 0, 0, 0, 0])
        let plain = try await CLI.run(["compress", "-c", "x"], in: pair.sluice)
        #expect(plain.stdout == ours, "-n changes nothing")
        let decoded = try await CLI.run(["decompress", "--no-name", "-c", "x.gz"], in: pair.sluice)
        #expect(decoded.status == 0 && decoded.stdout == Self.data)
    }

    /// `-N` would store or restore a name and a time that Sluice never keeps in a header:
    /// refused as bad usage, before anything is written (gzip runs it).
    @Test(arguments: [["compress", "-N", "x"], ["decompress", "--name", "x.gz"], ["compress", "-kN", "x"]])
    func nameIsRefusedWithAMessage(arguments: [String]) async throws {
        let pair = try Pair(files: ["x": Self.data])
        try await writeWithGzip(Self.data, to: "x", in: pair.sluice)
        let before = pair.listings.sluice
        let result = try await CLI.run(arguments, in: pair.sluice)
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("Error: -N (--name) is not supported: sluice stores no file name"), "\(result.stderr)")
        #expect(pair.listings.sluice == before)
        let gzip = try await CLI.shell("gzip -N -k x", in: pair.gzip)
        #expect(gzip.status == 0)
    }

    /// `x.tgz` and `x.taz` decompress to `x.tar`, as gzip names them, with the same bytes.
    @Test(arguments: ["tgz", "taz"])
    func tarSuffixesDecompressToDotTar(suffix: String) async throws {
        let pair = try Pair(files: [:])
        for sandbox in [pair.sluice, pair.gzip] {
            try await writeWithGzip(Self.data, to: "x", in: sandbox)
            try #require(rename(sandbox.path("x.gz"), sandbox.path("x.\(suffix)")) == 0)
            unlink(sandbox.path("x"))
        }
        let result = try await pair.run(["decompress", "x.\(suffix)"], gzip: "gzip -dk x.\(suffix)")
        #expect(result.sluice.status == 0 && result.gzip.status == 0, "\(result.sluice.stderr)")
        #expect(pair.listings.sluice == ["x.tar", "x.\(suffix)"] && pair.listings.gzip == pair.listings.sluice)
        #expect(pair.sluice.contents("x.tar") == Self.data)
        #expect(pair.sluice.contents("x.tar") == pair.gzip.contents("x.tar"))
        // Compressing it again is refused as for .gz (a warning; gzip says the same).
        let again = try await pair.run(["compress", "x.\(suffix)"], gzip: "gzip -k x.\(suffix)")
        #expect(again.sluice.status == 2)
        #expect(again.sluice.stderr.contains("'x.\(suffix)' already has the .\(suffix) suffix -- unchanged"))
        #expect(again.gzip.stderr.contains("already has .\(suffix) suffix -- unchanged"))
        #expect(pair.listings.sluice == pair.listings.gzip)
        // A name that is only the suffix has no name to decompress to.
        try #require(rename(pair.sluice.path("x.\(suffix)"), pair.sluice.path(".\(suffix)")) == 0)
        let bare = try await CLI.run(["decompress", ".\(suffix)"], in: pair.sluice)
        #expect(bare.status == 1 && bare.stderr.contains("the name is only the .\(suffix) suffix"), "\(bare.stderr)")
    }
}
