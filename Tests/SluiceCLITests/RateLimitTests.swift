import SluiceTestSupport
import Testing

/// `--limit-rate`: read in binary units, as `--chunk-size`; no timing here (the measured rate
/// is in benchmarks/README.md).
@Suite(.timeLimit(.minutes(3)))
struct RateLimitTests {
    @Test(arguments: [
        ("0", "--limit-rate is a rate: at least 1 byte per second"),
        ("fast", "invalid rate 'fast' for --limit-rate (bytes per second, with an optional unit: 100K, 50M)"),
        ("99999999999999999999", "rate '99999999999999999999' for --limit-rate is too large: at most"),
        ("9000000T", "rate '9000000T' for --limit-rate is too large: at most"),
    ])
    func aBadRateIsAUsageError(_ rate: String, _ message: String) async throws {
        let sandbox = try Sandbox()
        try sandbox.write("a", to: "in")
        let result = try await CLI.run(["copy", "--limit-rate", rate, "in", "out"], in: sandbox)
        #expect(result.status == 64)
        #expect(result.stderrLines.first?.hasPrefix("Error: " + message) == true, "\(result.stderr)")
        #expect(!sandbox.exists("out"))
    }

    /// Each command takes the option; the data is unchanged and `-v` names the limit.
    @Test(arguments: [["copy", "in", "out"], ["compress", "-o", "out", "in"], ["decompress", "-o", "out", "in.gz"]])
    func eachCommandTakesTheLimit(_ arguments: [String]) async throws {
        let sandbox = try Sandbox()
        let data = pattern(count: 2 * (1 << 20) + 3)
        try await writeWithGzip(data, to: "in", in: sandbox)
        let result = try await CLI.run([arguments[0], "-v", "--limit-rate", "1G"] + arguments.dropFirst(), in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains(", read at most 1.0 GiB/s, "), "\(result.stderr)")
        if arguments[0] != "compress" { #expect(sandbox.contents("out") == data) }
    }
}
