import FoundationEssentials
import Sluice
import SluiceBenchmarks

extension BenchRunner {
    /// Prints the medians of each design with each consumer, with the range (lowest to highest)
    /// of the counted runs' speeds and peak RSS, `cp` and `cat`, and the ratios between them.
    func printTable(_ rows: [(median: BenchmarkRun, range: RunRange)], references: [String: Double]) {
        let runs = rows.map(\.median)
        let megabytes = Double(plan.size) / 1_048_576
        let widths = [18, 9, 8, 13, 11, 23, 14, 20]
        var text = "\n" + row(["design", "consumer", "MiB/s", "MiB/s range", "peak RSS", "peak RSS range", "peak buffered", "outcome"], widths) + "\n"
        for (run, range) in rows {
            text += row([
                run.design.rawValue, run.consumer.rawValue,
                run.mebibytesPerSecond.map { fixed($0, 0) } ?? "-",
                range.speed.map { fixed($0.lowerBound, 0) + "-" + fixed($0.upperBound, 0) } ?? "-",
                ProgressDisplay.formatBytes(run.peakResidentBytes),
                ProgressDisplay.formatBytes(range.peakResident.lowerBound) + "-" + ProgressDisplay.formatBytes(range.peakResident.upperBound),
                ProgressDisplay.formatBytes(run.peakBufferedBytes),
                run.outcome.description,
            ], widths) + "\n"
        }
        for name in ["cp", "cat"] {
            if let seconds = references[name] {
                text += row([name, "-", fixed(megabytes / seconds, 0), "-", "-", "-", "-", "ok"], widths) + "\n"
            }
        }
        func find(_ design: BenchmarkDesign, _ consumer: BenchmarkConsumer) -> BenchmarkRun? {
            runs.first { $0.design == design && $0.consumer == consumer }
        }
        text += "\n"
        if let bounded = find(.boundedPull, .fast), let unbounded = find(.unboundedStream, .fast) {
            text += "speed, fast consumer: bounded-pull / unbounded-stream = \(fixed(unbounded.seconds / bounded.seconds, 2))x\n"
        }
        if let bounded = find(.boundedPull, .fast), let cat = references["cat"] {
            text += "speed, fast consumer: bounded-pull / cat = \(fixed(cat / bounded.seconds, 2))x\n"
        }
        if let bounded = find(.boundedPull, .fast), let cp = references["cp"] {
            text += "speed, fast consumer: bounded-pull / cp = \(fixed(cp / bounded.seconds, 2))x\n"
        }
        for consumer in plan.consumers {
            if let bounded = find(.boundedPull, consumer), let unbounded = find(.unboundedStream, consumer), bounded.peakResidentBytes > 0 {
                text += "peak RSS, \(consumer.rawValue) consumer: unbounded-stream / bounded-pull = "
                    + "\(fixed(Double(unbounded.peakResidentBytes) / Double(bounded.peakResidentBytes), 2))x\n"
            }
        }
        Console.writeOutput(text)
    }

    /// Prints the chunk-size sweep: per size, each line's median seconds, MiB/s and CPU seconds,
    /// its speed against `dd` at that size, and the CPU time one more chunk costs it (against the
    /// largest size; `-` at the largest size itself).
    func printSweep(_ sweep: ChunkSizeSweep) {
        let widths = [7, 18, 9, 8, 9, 9, 14]
        let largest = BinaryUnits.abbreviation(Int64(sweep.chunkSizes.last ?? 0))
        var text = "\nchunk-size sweep, fast consumer, medians of \(plan.runs) run\(plan.runs == 1 ? "" : "s")\n"
            + "  speed/dd: dd's seconds over the design's at the same size (above 1: faster than dd)\n"
            + "  CPU/chunk: (CPU s at the size - CPU s at \(largest)) / (chunks at the size - chunks at \(largest))\n"
        text += row(["chunk", "design", "seconds", "MiB/s", "CPU s", "speed/dd", "CPU/chunk µs"], widths) + "\n"
        var unmeasurable = false
        for point in sweep.points {
            let perChunk = sweep.cpuSecondsPerChunk(point.line, chunkBytes: point.chunkBytes)
            if let perChunk, perChunk < 0 { unmeasurable = true }
            text += row([
                BinaryUnits.abbreviation(Int64(point.chunkBytes)), point.line, fixed(point.seconds, 3),
                point.mebibytesPerSecond.map { fixed($0, 0) } ?? "-", fixed(point.cpuSeconds, 3),
                sweep.speedRelativeToReference(point.line, chunkBytes: point.chunkBytes).map { fixed($0, 2) + "x" } ?? "-",
                perChunk.map { $0 < 0 ? "unmeasurable" : fixed($0 * 1e6, 2) } ?? "-",
            ], widths) + "\n"
        }
        if unmeasurable {
            text += "  unmeasurable: less CPU time at this size than at \(largest), the difference smaller than the "
                + "run-to-run noise (more runs, or a larger input, measure it)\n"
        }
        Console.writeOutput(text)
    }

    /// `fields` padded to `widths`, trailing spaces dropped.
    func row(_ fields: [String], _ widths: [Int]) -> String {
        var line = zip(fields, widths).map { field, width in field + String(repeating: " ", count: max(1, width - field.count)) }
            .joined()
        while line.last == " " { line.removeLast() }
        return line
    }

    /// `value` with `digits` decimals; `-` for a value that is not finite.
    func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return "-" }
        return String(printf: "%.\(digits)f", value)
    }
}
