#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Sluice
import SluiceBenchmarks
import SluiceTestSupport
import Testing

/// `sluice bench`: the memory measure it reports (each child's own `VmHWM`), and a small run end
/// to end (case C25).
@Suite(.serialized, .timeLimit(.minutes(4)))
struct BenchTests {
    /// `sluice bench-probe SIZE` allocates and touches SIZE bytes and prints its own peak RSS.
    func probe(_ size: String, in sandbox: Sandbox) async throws -> Int64 {
        let result = try await CLI.run(["bench-probe", size], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(Int64(result.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    @Test func childAllocatingAKnownAmountReportsAtLeastThatPeak() async throws {
        let sandbox = try Sandbox()
        let peak = try await probe("96M", in: sandbox)
        #expect(peak >= 96 << 20)
    }

    @Test func smallChildMeasuredAfterALargeOneReportsSmall() async throws {
        let sandbox = try Sandbox()
        let large = try await probe("160M", in: sandbox)
        let small = try await probe("0", in: sandbox)
        #expect(large >= 160 << 20)
        #expect(small < 48 << 20, "a child that allocates nothing reported \(small) bytes")
    }

    @Test func smallBenchWritesOneCSVRowPerCountedRunAndAPlot() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.run(
            ["bench", "--size", "8M", "--runs", "2", "--out", sandbox.path("out"),
             "--design", "unbounded-stream,bounded-pull", "--sink-rate", "64M"],
            in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutText.contains("bounded-pull"))
        #expect(result.stdoutText.contains("cat"))
        #expect(!result.stdoutText.contains("chunk-size sweep"))
        #expect(result.stderr.contains("without fsync"))
        let csv = try #require(sandbox.text("out/bench.csv"))
        let lines = csv.split(separator: "\r\n").map(String.init)
        #expect(lines.first == "design,consumer,bytes_moved,seconds,mib_per_s,peak_rss_bytes,peak_buffered_bytes,chunk_bytes,cpu_seconds,outcome")
        // cp and cat × 2 counted runs, then 2 designs × 2 consumers × 2; warm-ups are not written.
        #expect(lines.count == 1 + 4 + 8)
        let rows = lines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        #expect(rows.allSatisfy { $0.count == 10 && $0.last == "ok" })
        #expect(rows.prefix(4).map(\.first) == ["cp", "cp", "cat", "cat"])
        #expect(rows.allSatisfy { $0[2] == "\(8 << 20)" })
        // Every row has its CPU time; the designs their chunk size, cp and cat none.
        #expect(rows.allSatisfy { (Double($0[8]) ?? 0) > 0 }, "\(rows)")
        #expect(rows.map { $0[7] } == Array(repeating: "", count: 4) + Array(repeating: "\(1 << 20)", count: 8))
        let svg = try #require(sandbox.text("out/memory.svg"))
        #expect(svg.hasPrefix("<svg"))
        #expect(svg.contains("unbounded-stream"))
        // Nothing of the benchmark's own files is left behind.
        #expect(sandbox.listing("out").sorted() == ["bench.csv", "memory.svg"])
        // The second counted round runs the subjects in the reverse order of the first.
        let first = Self.progressLabels(result.stderr, ending: " run 1/2")
        #expect(first.count == 6, "\(result.stderr)")
        #expect(first.last == "cp", "round 1 runs the subjects in reverse")
        #expect(Self.progressLabels(result.stderr, ending: " run 2/2") == first.reversed())
    }

    /// The steps of the progress lines (one a line: standard error is not a terminal) whose
    /// label ends with `suffix`, without it, in order.
    static func progressLabels(_ stderr: String, ending suffix: String) -> [String] {
        stderr.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("bench ["), line.hasSuffix(suffix), let end = line.range(of: " s  ") else { return nil }
            return String(line[end.upperBound...].dropLast(suffix.count))
        }
    }

    /// `--chunk-sizes`: at each size, rows for bounded-pull and unbounded-stream with the fast
    /// consumer and for `dd bs=SIZE`, a summary against dd, and the plot of throughput against
    /// chunk size.
    @Test func chunkSizeSweepWritesRowsForTheDesignsAndDdAtEachSize() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.run(
            ["bench", "--size", "4M", "--runs", "1", "--chunk-sizes", "4K,64K", "--out", sandbox.path("out")], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        let csv = try #require(sandbox.text("out/bench.csv"))
        let rows = csv.split(separator: "\r\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        #expect(rows.allSatisfy { $0.count == 10 })
        for size in [4096, 65536] {
            for (design, consumer) in [("bounded-pull", "fast"), ("unbounded-stream", "fast"), ("dd", "-")] {
                let matching = rows.filter { $0[0] == design && $0[1] == consumer && $0[7] == "\(size)" }
                #expect(matching.count == 1, "\(design) at \(size): \(rows)")
                #expect(matching.allSatisfy { $0[2] == "\(4 << 20)" && (Double($0[8]) ?? 0) > 0 && $0.last == "ok" }, "\(matching)")
            }
        }
        // The designs × consumers at the default 1 MiB chunk are still measured.
        #expect(rows.contains { $0[0] == "push-spill" && $0[1] == "slow" && $0[7] == "\(1 << 20)" })
        #expect(result.stdoutText.contains("chunk-size sweep"))
        let summary = result.stdoutText.split(separator: "\n").filter { $0.hasPrefix("4K ") }
        #expect(summary.count == 3, "\(result.stdoutText)")
        #expect(summary.allSatisfy { $0.split(separator: " ").count == 7 }, "\(summary)")
        let svg = try #require(sandbox.text("out/chunk-sizes.svg"))
        #expect(svg.hasPrefix("<svg") && svg.contains(">dd</text>") && svg.contains(">64K</text>"))
        #expect(sandbox.listing("out").sorted() == ["bench.csv", "chunk-sizes.svg", "memory.svg"])
    }

    /// A bad size in `--chunk-sizes` is a usage error: exit 64, the message, bench's usage and
    /// the hint to its help, and nothing measured.
    @Test(arguments: [
        ("4K,lots", "invalid size 'lots' for --chunk-sizes (a count of bytes with an optional unit: 4096, 256K, 1M, 1MiB; KB, MB, GB are decimal)"),
        ("4K,,1M", "invalid size '' for --chunk-sizes (a count of bytes with an optional unit: 4096, 256K, 1M, 1MiB; KB, MB, GB are decimal)"),
        ("0", "--chunk-sizes must be at least 1 byte"),
        ("64K,2G", "--chunk-sizes must be at most 1G"),
        ("", "--chunk-sizes needs at least one value"),
    ])
    func badChunkSizesAreBadUsage(value: String, message: String) async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.run(["bench", "--chunk-sizes", value, "--out", sandbox.path("out")], in: sandbox)
        #expect(result.status == 64)
        #expect(result.stderr == """
            Error: \(message)
            Usage: sluice bench [<options>]
              See 'sluice bench --help' for more information.

            """)
        #expect(result.stdout.isEmpty)
        #expect(!sandbox.exists("out"))
    }

    /// C40: a `push-fail` run that stops after a few chunks records the bytes it moved and no
    /// speed, not the input size and a speed nobody got.
    @Test func failedRunRecordsTheBytesItMovedAndNoSpeed() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.run(
            ["bench", "--size", "32M", "--runs", "1", "--out", sandbox.path("out"),
             "--design", "push-fail", "--consumer", "slow", "--sink-rate", "16M"],
            in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        let csv = try #require(sandbox.text("out/bench.csv"))
        let rows = csv.split(separator: "\r\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        #expect(rows.map(\.first) == ["cp", "cat", "push-fail"])
        let failed = try #require(rows.last)
        #expect(failed.last == "capacity-exceeded")
        // 4 chunks of 1 MiB in the push buffer and 4 in the pipeline are all it can hold: far
        // less than 32 MiB arrives before the failure.
        let moved = try #require(Int64(failed[2]))
        #expect(moved < 16 << 20)
        #expect(failed[4].isEmpty, "a failed run has no speed: \(failed)")
        #expect(rows.prefix(2).allSatisfy { $0[2] == "\(32 << 20)" && !$0[4].isEmpty })
    }

    /// A producer that cannot pause (`push-spill`: a thread reads a 400 MiB file as fast as it
    /// can into a `PushBuffer` that spills past 16 chunks of 64 KiB, 1 MiB) and a sink throttled
    /// to 400 MiB/s: the spill takes the backlog, every byte arrives in order, and the child's
    /// peak RSS stays under 64 MiB.
    @Test(.disabled(if: Sanitizer.inflatesMemory, "sanitizers inflate RSS: peak memory is asserted in normal builds only"))
    func pushSpillRunKeepsItsPeakRSSFlatWhileTheSpillTakesTheBacklog() async throws {
        let sandbox = try Sandbox()
        let size: Int64 = 400 << 20
        let input = sandbox.path("input.bin")
        let output = sandbox.path("output.bin")
        // 400 MiB written and summed on a thread of its own, not the cooperative pool.
        let written = try await onThread { Result { try Self.writeStampedFile(Pathname(input), size: size) } }.get()
        let result = try await CLI.run(
            ["bench-run", "--design", "push-spill", "--consumer", "slow", "--input", input, "--output", output,
             "--sink-rate", "\(400 << 20)", "--chunk-size", "\(64 << 10)", "--capacity", "16", "--spill-dir", sandbox.root],
            in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        let run = try JSONDecoder().decode(BenchmarkRun.self, from: Data(result.stdout))
        let summary = "\(run.outcome), \(run.bytesMoved) bytes, \(run.spilledChunks) chunks spilled, peak RSS \(run.peakResidentBytes)"
        #expect(run.outcome == .ok, "\(summary)")
        #expect(run.bytesMoved == size, "\(summary)")
        #expect(run.spilledChunks > 0, "the sink was not slower than the producer: \(summary)")
        #expect(run.peakResidentBytes > 0 && run.peakResidentBytes < 64 << 20, "\(summary)")
        #expect(try await Self.crc32(of: Pathname(output)) == written, "the output differs from the input")
        #expect(sandbox.leftovers().isEmpty, "spill or temporary files left: \(sandbox.listing())")
    }

    /// Writes `size` bytes to `path` in 64 KiB blocks of seeded noise, each block's first 8 bytes
    /// its index (so a block out of order changes the CRC-32); returns that CRC-32.
    static func writeStampedFile(_ path: Pathname, size: Int64) throws -> CRC32 {
        let blockSize = 64 << 10
        var block = pattern(count: blockSize, seed: 0x5B111)
        var crc = CRC32()
        let descriptor = try Descriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC, permissions: 0o644)
        defer { try? descriptor.close() }
        var offset: Int64 = 0
        var index: UInt64 = 0
        while offset < size {
            let count = Int(min(Int64(blockSize), size - offset))
            withUnsafeBytes(of: index.littleEndian) { stamp in
                block.withUnsafeMutableBytes { $0.copyMemory(from: stamp) }
            }
            try block.withUnsafeBytes { bytes in
                let slice = UnsafeRawBufferPointer(rebasing: bytes[..<count])
                try descriptor.write(contentsOf: slice)
                crc.update(slice)
            }
            offset += Int64(count)
            index += 1
        }
        return crc
    }

    /// The CRC-32 of the file at `path`, read a chunk at a time.
    static func crc32(of path: Pathname) async throws -> CRC32 {
        var crc = CRC32()
        for try await chunk in try await FileChunks.open(path) {
            chunk.withUnsafeBytes { crc.update($0) }
        }
        return crc
    }

    @Test func unknownDesignIsBadUsage() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.run(["bench", "--design", "teleport"], in: sandbox)
        #expect(result.status == 64)
    }
}
