@testable import Sluice
@testable import SluiceCLI
import SluiceTestSupport
import Testing

/// `--verify`: each output read back before its commit; a difference commits nothing, names
/// the offset and exits 1.
@Suite(.timeLimit(.minutes(3)))
struct VerifyTests {
    @Test(arguments: [
        (["copy", "--verify", "--no-fsync", "in", "out"], "--verify reads the output back from the disk: it cannot be used with --no-fsync"),
        (["copy", "--verify", "in", "-"], "--verify reads the output back: it cannot be used with standard output"),
        (["compress", "--verify", "-c", "in"], "--verify reads the output back: it cannot be used with standard output"),
        (["compress", "--verify", "--no-fsync", "in"], "--verify reads the output back from the disk: it cannot be used with --no-fsync"),
        (["decompress", "--verify", "-t", "in.gz"], "--test writes nothing: it cannot be used with --verify"),
        (["decompress", "--verify", "-o", "-", "in.gz"], "--verify reads the output back: it cannot be used with standard output"),
    ])
    func verifyWithoutADurableFileIsAUsageError(_ arguments: [String], _ message: String) async throws {
        let sandbox = try Sandbox()
        try await writeWithGzip(pattern(count: 1000), to: "in", in: sandbox)
        let result = try await CLI.run(arguments, in: sandbox)
        #expect(result.status == 64)
        #expect(result.stderrLines.first == "Error: " + message)
        #expect(!sandbox.exists("out"))
    }

    /// A sparse file whose data ends in a hole, through the pipeline: read back at its full
    /// size (the size is set before the read-back), verified, and still sparse. Its source is
    /// read through read(2), not its hole map; the holes come back as zero blocks.
    @Test(arguments: ["--pipeline", "--chunk-size=64K"])
    func aSparseFileEndingInAHoleIsVerified(_ path: String) async throws {
        let sandbox = try Sandbox()
        let made = try await CLI.shell("head -c 100000 /dev/urandom > in && truncate -s 10M in", in: sandbox)
        #expect(made.status == 0)
        let result = try await CLI.run(["copy", "--verify", "-v", path, "in", "out"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("verified"), "\(result.stderr)")
        #expect(sandbox.contents("out") == sandbox.contents("in"))
        let allocated = Int(sandbox.status("out")?.st_blocks ?? .max) * 512
        #expect(allocated < 1 << 20, "\(allocated) bytes allocated")
    }

    /// `-v` says so; the outputs are what they would be without `--verify`.
    @Test func verboseReportsVerifiedForEachCommand() async throws {
        let sandbox = try Sandbox()
        let data = pattern(count: 3 * (1 << 20) + 5)
        try sandbox.write(data, to: "in")
        let copy = try await CLI.run(["copy", "-v", "--verify", "in", "copied"], in: sandbox)
        #expect(copy.status == 0)
        #expect(copy.stderr.contains(", verified, "), "\(copy.stderr)")
        #expect(sandbox.contents("copied") == data)
        let compress = try await CLI.run(["compress", "-v", "--verify", "in"], in: sandbox)
        #expect(compress.status == 0)
        #expect(compress.stderr.contains(", verified, "), "\(compress.stderr)")
        let decompress = try await CLI.run(["decompress", "-v", "--verify", "-o", "back", "in.gz"], in: sandbox)
        #expect(decompress.status == 0)
        #expect(decompress.stderr.contains(", verified, "), "\(decompress.stderr)")
        #expect(sandbox.contents("back") == data)
    }

    /// A device written in place cannot be read back: a warning (exit 2), as any output that
    /// differs from what was asked.
    @Test func aDeviceIsNotVerifiedWithAWarning() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(pattern(count: 1000), to: "in")
        let result = try await CLI.run(["copy", "--verify", "in", "/dev/null"], in: sandbox)
        #expect(result.status == 2)
        #expect(result.stderr == "sluice: copy 'in': not verified: '/dev/null' is written in place (not a regular file) "
            + "and cannot be read back\n")
    }

    /// A write that stores one byte wrong, injected through the system-call seam of the
    /// destination's sink: the transfer fails with a message that names the destination and
    /// the offset, the command's exit status is 1, and the old destination is untouched.
    @Test func aCorruptedWriteFailsWithTheOffsetAndCommitsNothing() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(pattern(count: 3 * (1 << 20)), to: "in")
        try sandbox.write("OLD", to: "out")
        let arguments = ["--verify", "--force", sandbox.path("in"), sandbox.path("out")]
        let options = try CopyOptions(try ParsedArguments(arguments.map { Array($0.utf8) }, for: .copy))
        var transfer = Transfer(
            source: .file(Pathname(sandbox.path("in"))), destination: options.destination(for: Pathname(sandbox.path("in"))),
            verb: "copy", transform: nil, created: CreatedFiles())
        transfer.system = systemCallsCorruptingWrites(atOffset: 2_000_001)
        let outcome = await transfer.run(options: options.common)
        guard case .failure(let message) = outcome else {
            Issue.record("expected a failure, got \(outcome)")
            return
        }
        let text = try #require(message)
        #expect(text.hasPrefix("cannot copy '\(sandbox.path("in"))': '\(sandbox.path("out"))' does not read back as it "
            + "was written: its data first differs from the source at offset 2000001 (read back: 3145728 bytes"), "\(text)")
        #expect(text.hasSuffix("; nothing committed"))
        var tally = OperandTally()
        _ = tally.record(outcome)
        #expect(tally.status == 1)
        #expect(sandbox.text("out") == "OLD")
        #expect(sandbox.leftovers().isEmpty)
    }

    /// The same for `decompress`: the output is read back as it is, and the source decoded again
    /// by the command's own decoder (the transform's factory) beside it names the offset in the
    /// decoded data.
    @Test func aCorruptedDecompressionFailsWithTheOffsetInTheDecodedData() async throws {
        let sandbox = try Sandbox()
        try await writeWithGzip(pattern(count: 3 * (1 << 20)), to: "in", in: sandbox)
        let arguments = ["--verify", "-o", sandbox.path("out"), sandbox.path("in.gz")]
        let options = try GzipOptions(.decompress, try ParsedArguments(arguments.map { Array($0.utf8) }, for: .decompress))
        guard case .transfer(var transfer) = options.step(for: Pathname(sandbox.path("in.gz")), created: CreatedFiles()) else {
            Issue.record("expected a transfer")
            return
        }
        transfer.system = systemCallsCorruptingWrites(atOffset: 2_000_001)
        guard case .failure(let message) = await transfer.run(options: options.common) else {
            Issue.record("expected a failure")
            return
        }
        let text = try #require(message)
        #expect(text.hasPrefix("cannot decompress '\(sandbox.path("in.gz"))': '\(sandbox.path("out"))' does not read back as "
            + "it was written: its data first differs from the source's decoded data at offset 2000001 (read back: 3145728 bytes"),
            "\(text)")
        #expect(!sandbox.exists("out"))
        #expect(sandbox.leftovers().isEmpty)
    }
}
