#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Sluice
import SluiceBenchmarks

/// Carries out a ``BenchCommand/Plan``: makes the input, times `cp` and `cat`, runs each design
/// and consumer in child processes (one warm-up discarded, then the counted runs, back to back),
/// prints the table and ratios, writes `bench.csv` and `memory.svg`.
struct BenchRunner {
    var plan: BenchCommand.Plan

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The files one benchmark works with, in a scratch directory it removes at the end.
    private struct Workspace {
        var directory: FilePath
        var input: FilePath
        var output: FilePath
        var executable: String
        var progress: StepProgress
    }

    /// Runs the whole benchmark and writes its results.
    ///
    /// - Returns: 0.
    /// - Throws: ``Failure`` or a system error when the input, a reference command or the
    ///   results cannot be written; a design's run that fails is recorded, not thrown.
    func run() async throws -> Int32 {
        try makeDirectory(plan.out)
        let directory = try makeTemporaryDirectory(in: plan.out)
        defer { removeTree(directory) }
        let totalSteps = 2 * (plan.runs + 1) + plan.designs.count * plan.consumers.count * (plan.runs + 1)
        let work = Workspace(
            directory: directory, input: directory.appending("input.bin"), output: directory.appending("output.bin"),
            executable: try selfExecutable(), progress: StepProgress(total: totalSteps + 1))

        work.progress.begin("writing a \(ProgressDisplay.formatBytes(plan.size)) input")
        try writeInput(work.input, size: plan.size)
        work.progress.end()
        Console.writeError("sluice bench: \(ProgressDisplay.formatBytes(plan.size)) input, \(plan.runs) counted run\(plan.runs == 1 ? "" : "s") each (median), "
            + "chunk \(ProgressDisplay.formatBytes(Int64(plan.chunkSize))), capacity \(plan.capacity), slow consumer "
            + "\(ProgressDisplay.formatBytes(plan.sinkRate))/s; writes without fsync (--no-fsync semantics)\n")

        let (references, referenceRuns) = try await timeReferences(work)
        var counted: [BenchmarkRun] = []
        var medians: [BenchmarkRun] = []
        for design in plan.designs {
            for consumer in plan.consumers {
                let runs = try await measure(design, consumer, work)
                counted += runs
                medians.append(medianRun(runs))
            }
        }
        work.progress.finish()

        printTable(medians, references: references)
        try writeResults(counted: counted, medians: medians, references: referenceRuns)
        return ExitStatus.success
    }

    /// Times `cp` and `cat` on the input: one warm-up, then the counted runs.
    ///
    /// - Returns: each command's median time in seconds, and every counted run.
    private func timeReferences(_ work: Workspace) async throws -> ([String: Double], [ReferenceRun]) {
        var references: [String: Double] = [:]
        var referenceRuns: [ReferenceRun] = []
        for (name, command) in [("cp", "cp '\(work.input)' '\(work.output)'"), ("cat", "cat '\(work.input)' > '\(work.output)'")] {
            var times: [Double] = []
            for index in 0...plan.runs {
                work.progress.begin("\(name) \(index == 0 ? "warm-up" : "run \(index)/\(plan.runs)")")
                let result = try await ChildProcess.run("/bin/sh", ["-c", command], scratch: work.directory)
                removeFile(work.output)
                work.progress.end()
                guard result.status == 0 else { throw Failure(description: "\(name) failed: \(result.standardError)") }
                if index > 0 {
                    times.append(result.seconds)
                    referenceRuns.append(ReferenceRun(command: name, bytesMoved: plan.size, seconds: result.seconds, cpuSeconds: result.cpuSeconds))
                }
            }
            references[name] = median(times)
        }
        return (references, referenceRuns)
    }

    /// Runs `design` with `consumer` in child processes: one warm-up, then the counted runs.
    ///
    /// - Returns: the counted runs.
    private func measure(_ design: BenchmarkDesign, _ consumer: BenchmarkConsumer, _ work: Workspace) async throws -> [BenchmarkRun] {
        var runs: [BenchmarkRun] = []
        for index in 0...plan.runs {
            work.progress.begin("\(design.rawValue) / \(consumer.rawValue) \(index == 0 ? "warm-up" : "run \(index)/\(plan.runs)")")
            let arguments = [
                "bench-run", "--design", design.rawValue, "--consumer", consumer.rawValue,
                "--input", "\(work.input)", "--output", "\(work.output)", "--sink-rate", "\(plan.sinkRate)",
                "--chunk-size", "\(plan.chunkSize)", "--capacity", "\(plan.capacity)", "--spill-dir", "\(work.directory)",
            ]
            let result = try await ChildProcess.run(work.executable, arguments, scratch: work.directory)
            removeFile(work.output)
            work.progress.end()
            if index > 0 { runs.append(benchmarkRun(design, consumer, result)) }
        }
        return runs
    }

    /// What one child reported, or, when it could not report, its failure with no bytes claimed.
    private func benchmarkRun(_ design: BenchmarkDesign, _ consumer: BenchmarkConsumer, _ result: ChildProcess.Result) -> BenchmarkRun {
        guard result.status == 0, var run = try? JSONDecoder().decode(BenchmarkRun.self, from: Data(result.standardOutput.utf8)) else {
            let message = result.standardError.split(separator: "\n").last.map(String.init) ?? "exit status \(result.status)"
            // The child could not say what it moved: nothing is claimed.
            return BenchmarkRun(
                design: design, consumer: consumer, bytesMoved: 0, seconds: result.seconds,
                peakResidentBytes: result.peakResidentBytes, peakBufferedBytes: 0, outcome: .error(message), samples: [],
                chunkBytes: plan.chunkSize, cpuSeconds: result.cpuSeconds)
        }
        // Wall time from spawn to exit, as for cp and cat: what a user waits for.
        run.seconds = result.seconds
        // CPU time of the whole child, from wait4: the child cannot count its own exit.
        run.cpuSeconds = result.cpuSeconds
        // The child's own high-water mark (VmHWM at exit). wait4's ru_maxrss on that child is
        // kept for children that could not report: after posix_spawn it also counts this
        // process's peak (see ChildProcess).
        if run.peakResidentBytes <= 0 { run.peakResidentBytes = result.peakResidentBytes }
        return run
    }

    /// The run of median time, with the medians of the peaks.
    private func medianRun(_ runs: [BenchmarkRun]) -> BenchmarkRun {
        let sorted = runs.sorted { $0.seconds < $1.seconds }
        var middle = sorted[sorted.count / 2]
        middle.peakResidentBytes = Int64(median(runs.map { Double($0.peakResidentBytes) }))
        middle.peakBufferedBytes = Int64(median(runs.map { Double($0.peakBufferedBytes) }))
        return middle
    }

    /// Writes `bench.csv` (every counted run) and `memory.svg` (the medians' memory over time).
    private func writeResults(counted: [BenchmarkRun], medians: [BenchmarkRun], references: [ReferenceRun]) throws {
        let csvPath = plan.out.appending("bench.csv")
        let svgPath = plan.out.appending("memory.svg")
        try write(CSVWriter.csv(for: counted, references: references), to: csvPath)
        let series = medians.map { run in
            SVGPlot.Series(
                label: run.design.rawValue, panel: "\(run.consumer.rawValue) consumer",
                points: run.samples.map { ($0.seconds, Double($0.residentBytes) / 1_048_576) })
        }
        try write(SVGPlot.svg(series, title: "Resident memory over time, \(ProgressDisplay.formatBytes(plan.size)) input"), to: svgPath)
        Console.writeOutput("\nwrote \(csvPath) and \(svgPath)\n")
    }

    func printTable(_ runs: [BenchmarkRun], references: [String: Double]) {
        let megabytes = Double(plan.size) / 1_048_576
        var text = "\n" + row(["design", "consumer", "MiB/s", "peak RSS", "peak buffered", "outcome"]) + "\n"
        for run in runs {
            text += row([
                run.design.rawValue, run.consumer.rawValue,
                run.mebibytesPerSecond.map { CSVWriterFormat.fixed($0, 0) } ?? "-",
                ProgressDisplay.formatBytes(run.peakResidentBytes), ProgressDisplay.formatBytes(run.peakBufferedBytes),
                run.outcome.description,
            ]) + "\n"
        }
        for name in ["cp", "cat"] {
            if let seconds = references[name] {
                text += row([name, "-", CSVWriterFormat.fixed(megabytes / seconds, 0), "-", "-", "ok"]) + "\n"
            }
        }
        func find(_ design: BenchmarkDesign, _ consumer: BenchmarkConsumer) -> BenchmarkRun? {
            runs.first { $0.design == design && $0.consumer == consumer }
        }
        text += "\n"
        if let bounded = find(.boundedPull, .fast), let unbounded = find(.unboundedStream, .fast) {
            text += "speed, fast consumer: bounded-pull / unbounded-stream = \(CSVWriterFormat.fixed(unbounded.seconds / bounded.seconds, 2))x\n"
        }
        if let bounded = find(.boundedPull, .fast), let cat = references["cat"] {
            text += "speed, fast consumer: bounded-pull / cat = \(CSVWriterFormat.fixed(cat / bounded.seconds, 2))x\n"
        }
        if let bounded = find(.boundedPull, .fast), let cp = references["cp"] {
            text += "speed, fast consumer: bounded-pull / cp = \(CSVWriterFormat.fixed(cp / bounded.seconds, 2))x\n"
        }
        for consumer in plan.consumers {
            if let bounded = find(.boundedPull, consumer), let unbounded = find(.unboundedStream, consumer), bounded.peakResidentBytes > 0 {
                text += "peak RSS, \(consumer.rawValue) consumer: unbounded-stream / bounded-pull = "
                    + "\(CSVWriterFormat.fixed(Double(unbounded.peakResidentBytes) / Double(bounded.peakResidentBytes), 2))x\n"
            }
        }
        Console.writeOutput(text)
    }

    func row(_ fields: [String]) -> String {
        let widths = [18, 9, 8, 11, 14, 20]
        return zip(fields, widths).map { field, width in field + String(repeating: " ", count: max(1, width - field.count)) }
            .joined().trimmingTrailingSpaces()
    }

    func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    // MARK: Files

    func selfExecutable() throws -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { throw Failure(description: "cannot find the sluice executable (/proc/self/exe)") }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func makeDirectory(_ path: FilePath) throws {
        if path.withCString({ mkdir($0, 0o755) }) != 0 && errno != EEXIST {
            throw FileError.mkdir(path: path, errno: Errno(rawValue: errno))
        }
    }

    func makeTemporaryDirectory(in parent: FilePath) throws -> FilePath {
        var template = parent.appending(".sluice-bench-XXXXXX").bytes.map { CChar(bitPattern: $0) } + [0]
        guard mkdtemp(&template) != nil else {
            throw FileError.mkdtemp(path: parent, errno: Errno(rawValue: errno))
        }
        return FilePath(bytes: template.dropLast().map { UInt8(bitPattern: $0) })
    }

    func removeFile(_ path: FilePath) {
        _ = path.withCString { unlink($0) }
    }

    func removeTree(_ path: FilePath) {
        try? FileManager.default.removeItem(atPath: "\(path)")
    }

    /// Writes `size` bytes of pseudo-random data (a fixed seed: every run reads the same bytes).
    func writeInput(_ path: FilePath, size: Int64) throws {
        let descriptor = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC, permissions: 0o600)
        defer { try? descriptor.close() }
        var state: UInt64 = 0x5EED
        var block = [UInt64](repeating: 0, count: (1 << 20) / 8)
        var written: Int64 = 0
        while written < size {
            for index in block.indices {
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                block[index] = z ^ (z >> 31)
            }
            let count = Int(min(Int64(block.count * 8), size - written))
            do {
                try block.withUnsafeBytes { raw in
                    try descriptor.write(contentsOf: UnsafeRawBufferPointer(rebasing: raw[..<count]))
                }
            } catch {
                throw FileError.write(path: path, errno: error as? Errno ?? .ioError)
            }
            written += Int64(count)
        }
    }

    func write(_ text: String, to path: FilePath) throws {
        let temporary = FilePath(bytes: path.bytes + Array(".tmp".utf8))
        let descriptor = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_TRUNC, permissions: 0o644)
        do {
            try Array(text.utf8).withUnsafeBytes { raw in try descriptor.write(contentsOf: raw) }
            try descriptor.close()
        } catch {
            try? descriptor.close()
            throw FileError.write(path: path, errno: error as? Errno ?? .ioError)
        }
        if temporary.withCString({ from in path.withCString { to in rename(from, to) } }) != 0 {
            throw FileError.rename(path: path, errno: Errno(rawValue: errno))
        }
    }
}

/// A progress bar over the benchmark's steps (runs), on standard error.
final class StepProgress: @unchecked Sendable {
    private let total: Int
    private var done = 0
    private var label = ""
    private var started = ContinuousClock.now
    private let onTerminal = Console.isTerminal(2)

    init(total: Int) { self.total = total }

    func begin(_ label: String) {
        self.label = label
        draw()
    }

    func end() {
        done += 1
    }

    func finish() {
        done = total
        label = "done"
        draw()
        if onTerminal { Console.writeError("\n") }
    }

    private func draw() {
        let width = 24
        let filled = total > 0 ? done * width / total : width
        let elapsed = ContinuousClock.now - started
        let bar = "[" + String(repeating: "=", count: filled) + (filled < width ? ">" : "")
            + String(repeating: " ", count: max(0, width - filled - 1)) + "]"
        let line = "bench \(bar) \(done)/\(total)  \(elapsed.components.seconds) s  \(label)"
        if onTerminal {
            Console.writeError("\r" + line + "\u{1B}[K")
        } else {
            Console.writeError(line + "\n")
        }
    }
}

enum CSVWriterFormat {
    static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return "-" }
        return String(format: "%.\(digits)f", value)
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
