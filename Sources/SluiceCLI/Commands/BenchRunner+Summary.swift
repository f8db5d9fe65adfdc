import FoundationEssentials
import Sluice
import SluiceBenchmarks

extension BenchRunner {
    /// The table of each design with each consumer: the medians of the runs that succeeded,
    /// the range (lowest to highest) of their speeds and peak RSS, the outcome with the count
    /// of each kind of failure (``BenchmarkRow``), `cp` and `cat`, and the ratios between
    /// the rows that succeeded.
    func summary(_ rows: [BenchmarkRow], references: [String: Double]) -> String {
        Self.summary(rows, references: references, size: plan.size, consumers: plan.consumers)
    }

    /// The same, for an input of `size` bytes and `consumers`.
    static func summary(
        _ rows: [BenchmarkRow], references: [String: Double], size: Int64, consumers: [BenchmarkConsumer]
    ) -> String {
        let megabytes = Double(size) / 1_048_576
        let widths = [18, 9, 8, 13, 11, 23, 14, 20]
        var text = "\n" + row(["design", "consumer", "MiB/s", "MiB/s range", "peak RSS", "peak RSS range", "peak buffered", "outcome"], widths) + "\n"
        for item in rows {
            guard let run = item.median else { continue }
            let range = item.peakResidentRange
            text += row([
                run.design.rawValue, run.consumer.rawValue,
                run.mebibytesPerSecond.map { fixed($0, 0) } ?? "-",
                item.speedRange.map { fixed($0.lowerBound, 0) + "-" + fixed($0.upperBound, 0) } ?? "-",
                ProgressDisplay.formatBytes(run.peakResidentBytes),
                ProgressDisplay.formatBytes(range.lowerBound) + "-" + ProgressDisplay.formatBytes(range.upperBound),
                ProgressDisplay.formatBytes(run.peakBufferedBytes),
                item.outcome,
            ], widths) + "\n"
        }
        for name in ["cp", "cat"] {
            if let seconds = references[name] {
                text += row([name, "-", fixed(megabytes / seconds, 0), "-", "-", "-", "-", "ok"], widths) + "\n"
            }
        }
        func find(_ design: BenchmarkDesign, _ consumer: BenchmarkConsumer) -> BenchmarkRun? {
            rows.lazy.compactMap(\.medianOfSuccesses).first { $0.design == design && $0.consumer == consumer }
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
        for consumer in consumers {
            if let bounded = find(.boundedPull, consumer), let unbounded = find(.unboundedStream, consumer), bounded.peakResidentBytes > 0 {
                text += "peak RSS, \(consumer.rawValue) consumer: unbounded-stream / bounded-pull = "
                    + "\(fixed(Double(unbounded.peakResidentBytes) / Double(bounded.peakResidentBytes), 2))x\n"
            }
        }
        return text
    }

    /// Prints the chunk-size sweep: per size, each line's median seconds, MiB/s and CPU seconds,
    /// its speed against `dd` at that size, and the CPU time one more chunk costs it (against the
    /// largest size; `-` at the largest size itself).
    func printSweep(_ sweep: ChunkSizeSweep) {
        let widths = [7, 18, 9, 8, 9, 9, 14]
        let largest = BinaryUnits.abbreviation(Int64(sweep.chunkSizes.last ?? 0))
        var text = "\nchunk-size sweep, fast consumer, medians of \(plan.runs.counted("run"))\n"
            + "  speed/dd: dd's seconds over the design's at the same size (above 1: faster than dd)\n"
            + "  CPU/chunk: (CPU s at the size - CPU s at \(largest)) / (chunks at the size - chunks at \(largest))\n"
        text += Self.row(["chunk", "design", "seconds", "MiB/s", "CPU s", "speed/dd", "CPU/chunk µs"], widths) + "\n"
        var unmeasurable = false
        for point in sweep.points {
            let perChunk = sweep.cpuSecondsPerChunk(point.line, chunkBytes: point.chunkBytes)
            if let perChunk, perChunk < 0 { unmeasurable = true }
            text += Self.row([
                BinaryUnits.abbreviation(Int64(point.chunkBytes)), point.line, Self.fixed(point.seconds, 3),
                point.mebibytesPerSecond.map { Self.fixed($0, 0) } ?? "-", Self.fixed(point.cpuSeconds, 3),
                sweep.speedRelativeToReference(point.line, chunkBytes: point.chunkBytes).map { Self.fixed($0, 2) + "x" } ?? "-",
                perChunk.map { $0 < 0 ? "unmeasurable" : Self.fixed($0 * 1e6, 2) } ?? "-",
            ], widths) + "\n"
        }
        if unmeasurable {
            text += "  unmeasurable: less CPU time at this size than at \(largest), the difference smaller than the "
                + "run-to-run noise (more runs, or a larger input, measure it)\n"
        }
        Console.writeOutput(text)
    }

    /// `fields` padded to `widths`, trailing spaces dropped.
    static func row(_ fields: [String], _ widths: [Int]) -> String {
        var line = zip(fields, widths).map { field, width in field + String(repeating: " ", count: max(1, width - field.count)) }
            .joined()
        while line.last == " " { line.removeLast() }
        return line
    }

    /// `value` with `digits` decimals; `-` for a value that is not finite.
    static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return "-" }
        return String(printf: "%.\(digits)f", value)
    }
}
