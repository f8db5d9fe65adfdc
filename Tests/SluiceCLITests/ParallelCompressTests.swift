#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// `sluice compress -p N -b SIZE`: the block format on N threads, the same bytes for every N.
@Suite(.timeLimit(.minutes(4)))
struct ParallelCompressTests {
    @Test func outputIsTheSameForEveryThreadCountAndChunkSize() async throws {
        let sandbox = try Sandbox()
        let data = mixedData(count: 3 * 1024 * 1024 + 5)
        try sandbox.write(data, to: "input")
        var outputs: [String: [UInt8]] = [:]
        for threads in ["1", "2", "4"] {
            for chunkSize in ["4K", "64K", "1M"] {
                let result = try await CLI.run(
                    ["compress", "-p", threads, "--chunk-size", chunkSize, "-c", "input"], in: sandbox)
                #expect(result.status == 0, "\(result.stderr)")
                outputs["-p \(threads) --chunk-size \(chunkSize)"] = result.stdout
            }
        }
        let reference = try #require(outputs["-p 1 --chunk-size 1M"])
        for (options, output) in outputs.sorted(by: { $0.key < $1.key }) {
            #expect(output == reference, "\(options)")
        }
        try sandbox.write(reference, to: "input.gz")
        for decoder in ["gzip", "pigz"] where Tool.find(decoder) != nil {
            let decoded = try await CLI.shell("\(decoder) -dc input.gz > decoded-\(decoder)", in: sandbox)
            #expect(decoded.status == 0, "\(decoder): \(decoded.stderr)")
            #expect(sandbox.contents("decoded-\(decoder)") == data, "\(decoder)")
        }
        let ours = try await CLI.run(["decompress", "-c", "input.gz"], in: sandbox)
        #expect(ours.status == 0)
        #expect(ours.stdout == data)
    }

    /// A bare block size counts KiB, as `pigz -b`; other spellings take binary units.
    @Test func blockSizeIsInKiBWhenBare() async throws {
        let sandbox = try Sandbox()
        let data = mixedData(count: 1_000_000)
        try sandbox.write(data, to: "input")
        var outputs: [[UInt8]] = []
        for spelling in [["-b", "64"], ["--block-size", "64K"], ["--block-size=65536B"], ["-b64"], []] {
            let result = try await CLI.run(["compress", "-p", "2"] + spelling + ["-c", "input"], in: sandbox)
            #expect(result.status == 0, "\(spelling): \(result.stderr)")
            outputs.append(result.stdout)
        }
        #expect(outputs[0] == outputs[1] && outputs[1] == outputs[2] && outputs[2] == outputs[3])
        #expect(outputs[0] != outputs[4], "64 KiB blocks differ from the default 256 KiB")
        try sandbox.write(outputs[0], to: "input.gz")
        let decoded = try await CLI.shell("gzip -dc input.gz > decoded", in: sandbox)
        #expect(decoded.status == 0)
        #expect(sandbox.contents("decoded") == data)
    }

    @Test(arguments: [
        (["-b", "16"], "-b must be at least 32K"),
        (["--block-size", "31K"], "--block-size must be at least 32K"),
        (["-b", "1G"], "-b must be at most 512M"),
        (["-b", "99999999999999999999"], "-b must be at most 512M"),
        (["-b", "x"], "invalid size 'x' for -b"),
        (["-p", "0"], "invalid value '0' for -p (expected a count of threads, 1...1024)"),
        (["--threads", "two"], "invalid value 'two' for --threads"),
    ])
    func badThreadCountsAndBlockSizesAreBadUsage(options: [String], message: String) async throws {
        let sandbox = try Sandbox()
        try sandbox.write("data\n", to: "input")
        let result = try await CLI.run(["compress"] + options + ["input"], in: sandbox)
        #expect(result.status == 64)
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(sandbox.listing() == ["input"])
    }

    /// `-b` is compression's alone; `-p` sets decompression's threads too (a member gzip
    /// wrote decodes on one, as before).
    @Test func decompressTakesThreadsButNotABlockSize() async throws {
        let sandbox = try Sandbox()
        try await writeWithGzip(Array("data\n".utf8), to: "x", in: sandbox)
        let result = try await CLI.run(["decompress", "-b", "64", "-c", "x.gz"], in: sandbox)
        #expect(result.status == 64)
        #expect(result.stderr.contains("unknown option '-b'"), "\(result.stderr)")
        let threads = try await CLI.run(["decompress", "-p", "2", "-c", "x.gz"], in: sandbox)
        #expect(threads.status == 0, "\(threads.stderr)")
        #expect(threads.stdoutText == "data\n")
    }

    @Test func verboseReportsTheRatioAndTheThreads() async throws {
        let sandbox = try Sandbox()
        let data = mixedData(count: 400_000)
        try sandbox.write(data, to: "input")
        let result = try await CLI.run(["compress", "-v", "-p", "3", "input"], in: sandbox)
        #expect(result.status == 0)
        let report = try #require(result.stderrLines.last)
        let written = try #require(sandbox.contents("input.gz")).count
        let percent = Double(written) * 100 / Double(data.count)
        let tenths = Int((percent * 10).rounded())
        #expect(report.contains("400000 bytes read, \(written) bytes written (\(tenths / 10).\(tenths % 10)% of the input, 3 threads)"), "\(report)")
    }

    /// The default is the processors this process may run on (`sched_getaffinity`), not the
    /// machine's: confined to one CPU, it compresses on one thread.
    @Test(.enabled(if: Tool.find("taskset") != nil, "taskset is not installed"))
    func defaultThreadsAreTheProcessorsSluiceMayRunOn() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(mixedData(count: 10_000), to: "input")
        let result = try await CLI.shell("taskset -c 0 \"$SLUICE\" compress -v -c input > /dev/null", in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("% of the input, 1 thread)"), "\(result.stderr)")
    }

    @Test func helpDescribesThreadsAndBlockSize() async throws {
        let help = try await CLI.run(["help", "compress"], in: try Sandbox()).stdoutText
        #expect(help.contains("  -p, --threads <n>"))
        #expect(help.contains("  -b, --block-size <size>"))
        #expect(help.contains("nproc"))
    }
}
