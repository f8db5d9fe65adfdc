#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// A decompression bomb: 1 GiB of zeros as a ~5 MB gzip member decodes in flat memory.
///
/// The peak RSS is measured by GNU `time` (`%M`, from `wait4(2)` on a child it `fork`s). The
/// test's own `wait4` cannot measure it: `posix_spawn` starts the child with `CLONE_VM`, and at
/// `exec` the kernel keeps the spawning process's high-water mark in the child's `ru_maxrss`,
/// so every child would report at least the test runner's peak.
@Suite(
    .serialized, .timeLimit(.minutes(3)),
    .enabled(if: Tool.gnuTime != nil, "GNU time (/usr/bin/time, Debian package 'time') is not installed"),
    .disabled(
        if: Sanitizer.threadSanitizerIsActive,
        "ThreadSanitizer roughly doubles RSS: memory assertions run in normal builds only"))
struct DecompressionBombTests {
    static let limitKiB = 64 * 1024
    static let gibibyte: Int64 = 1 << 30

    /// Runs `sluice` with `arguments` (shell words) under GNU time; returns the result and the
    /// child's peak RSS in KiB.
    static func measure(_ arguments: String, in sandbox: Sandbox) async throws -> (CLIResult, Int) {
        let result = try await CLI.shell(#"/usr/bin/time -f %M -o rss.txt "$SLUICE" "# + arguments, in: sandbox)
        // After a failure GNU time writes "Command exited with non-zero status N" first.
        let report = try #require(sandbox.text("rss.txt"), "GNU time wrote no report: \(result.stderr)")
        let kib = try #require(report.split(separator: "\n").last.flatMap { Int($0) }, "GNU time wrote '\(report)'")
        unlink(sandbox.path("rss.txt"))
        return (result, kib)
    }

    @Test func bombDecodesInFlatMemory() async throws {
        let sandbox = try Sandbox()
        let made = try await CLI.shell("head -c 1G /dev/zero | gzip -1 -n > bomb.gz", in: sandbox)
        try #require(made.status == 0, "\(made.stderr)")
        let size = try #require(sandbox.status("bomb.gz")).st_size
        try #require(size < 8 * 1024 * 1024, "the bomb is \(size) bytes")

        let (toDevNull, devNullKiB) = try await Self.measure("decompress --no-fsync -v -o /dev/null bomb.gz", in: sandbox)
        #expect(toDevNull.status == 0, "\(toDevNull.stderr)")
        #expect(toDevNull.stderr.contains("\(Self.gibibyte) bytes written"), "\(toDevNull.stderr)")
        #expect(devNullKiB > 0)
        #expect(devNullKiB < Self.limitKiB, "peak RSS \(devNullKiB) KiB")

        let (tested, testedKiB) = try await Self.measure("decompress -t bomb.gz", in: sandbox)
        #expect(tested.status == 0, "\(tested.stderr)")
        #expect(testedKiB < Self.limitKiB, "peak RSS \(testedKiB) KiB")

        // Small chunks through the same pipeline: more hops, the same bound.
        let (small, smallKiB) = try await Self.measure("decompress -t --chunk-size 64K bomb.gz", in: sandbox)
        #expect(small.status == 0)
        #expect(smallKiB < Self.limitKiB, "peak RSS \(smallKiB) KiB")

        // A limit stops the bomb early and commits nothing.
        let (limited, limitedKiB) = try await Self.measure("decompress --max-output 100M bomb.gz", in: sandbox)
        #expect(limited.status == 1)
        #expect(limited.stderr.contains("output limit of 104857600 bytes exceeded"), "\(limited.stderr)")
        #expect(limitedKiB < Self.limitKiB, "peak RSS \(limitedKiB) KiB")
        expectNotCommitted("bomb", in: sandbox)
        print("decompression bomb, peak RSS in KiB: -o /dev/null \(devNullKiB), -t \(testedKiB), -t 64K chunks \(smallKiB), --max-output \(limitedKiB)")
    }
}
