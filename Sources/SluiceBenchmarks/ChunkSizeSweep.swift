/// The chunk-size sweep of `sluice bench --chunk-sizes`: for each chunk size and each line of
/// the sweep (`bounded-pull`, `unbounded-stream`, `dd`), the medians of the counted runs, the
/// speed against `dd` at the same size, and what one more chunk costs in CPU time.
///
/// The cost of a chunk is read off the difference between two sizes: moving the same bytes in
/// smaller chunks costs the same per byte and more per chunk, so
/// `(CPU at size S − CPU at the largest size) / (chunks at S − chunks at the largest size)` is
/// the CPU time each extra chunk adds: hand-offs, wake-ups, system calls. What every run pays
/// once (starting the process, opening the files) cancels out.
public struct ChunkSizeSweep: Sendable {
    /// The medians of one line of the sweep at one chunk size.
    public struct Point: Sendable, Hashable {
        /// The line: a design's name (`bounded-pull`, `unbounded-stream`) or a command's (`dd`).
        public var line: String
        /// Bytes per chunk.
        public var chunkBytes: Int
        /// Bytes each run moved.
        public var bytesMoved: Int64
        /// Median wall-clock seconds, spawn to exit.
        public var seconds: Double
        /// Median CPU seconds, user and system.
        public var cpuSeconds: Double

        /// Creates a point.
        public init(line: String, chunkBytes: Int, bytesMoved: Int64, seconds: Double, cpuSeconds: Double) {
            self.line = line
            self.chunkBytes = chunkBytes
            self.bytesMoved = bytesMoved
            self.seconds = seconds
            self.cpuSeconds = cpuSeconds
        }

        /// Chunks a run moves: the bytes over the chunk size, rounded up (the last chunk may be
        /// short).
        public var chunks: Int64 {
            chunkBytes > 0 ? (bytesMoved + Int64(chunkBytes) - 1) / Int64(chunkBytes) : 0
        }

        /// Throughput in MiB per second.
        public var mebibytesPerSecond: Double? {
            seconds > 0 ? Double(bytesMoved) / 1_048_576 / seconds : nil
        }
    }

    /// The name of the reference line, the one every other line's speed is compared with.
    public static let referenceLine = "dd"

    /// Every point, by chunk size (smallest first), then in the order the lines first appear.
    public let points: [Point]

    /// Takes the medians of the counted runs of each line at each chunk size: `runs` of the
    /// designs (only those that completed; a line whose runs all failed has no point there) and
    /// `references` whose chunk size is set (`dd`). Seconds and CPU seconds are medians of their
    /// own (the mean of the middle two for an even count).
    public init(runs: [BenchmarkRun], references: [ReferenceRun]) {
        var samples: [String: [(bytes: Int64, seconds: Double, cpu: Double)]] = [:]
        var order: [(line: String, chunkBytes: Int)] = []
        func add(_ line: String, _ chunkBytes: Int, _ sample: (Int64, Double, Double)) {
            let key = "\(chunkBytes) \(line)"
            if samples[key] == nil { order.append((line, chunkBytes)) }
            samples[key, default: []].append(sample)
        }
        for run in runs where run.outcome == .ok {
            add(run.design.rawValue, run.chunkBytes, (run.bytesMoved, run.seconds, run.cpuSeconds))
        }
        for run in references {
            guard let chunkBytes = run.chunkBytes else { continue }
            add(run.command, chunkBytes, (run.bytesMoved, run.seconds, run.cpuSeconds))
        }
        let lines = order.map(\.line).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        points = order
            .sorted { ($0.chunkBytes, lines.firstIndex(of: $0.line)!) < ($1.chunkBytes, lines.firstIndex(of: $1.line)!) }
            .map { entry in
                let runs = samples["\(entry.chunkBytes) \(entry.line)"]!
                return Point(
                    line: entry.line, chunkBytes: entry.chunkBytes, bytesMoved: runs[0].bytes,
                    seconds: runs.map(\.seconds).median, cpuSeconds: runs.map(\.cpu).median)
            }
    }

    /// The chunk sizes measured, smallest first.
    public var chunkSizes: [Int] {
        points.map(\.chunkBytes).reduce(into: []) { if $0.last != $1 { $0.append($1) } }
    }

    /// The lines measured, in the order they first appear.
    public var lines: [String] {
        points.map(\.line).reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
    }

    /// The point of `line` at `chunkBytes`, if it was measured.
    public func point(_ line: String, chunkBytes: Int) -> Point? {
        points.first { $0.line == line && $0.chunkBytes == chunkBytes }
    }

    /// How much faster `line` is than `dd` at the same chunk size: `dd`'s median seconds over
    /// the line's (above 1: faster than `dd`); `nil` if either was not measured.
    public func speedRelativeToReference(_ line: String, chunkBytes: Int) -> Double? {
        guard let point = point(line, chunkBytes: chunkBytes),
            let reference = self.point(Self.referenceLine, chunkBytes: chunkBytes), point.seconds > 0
        else { return nil }
        return reference.seconds / point.seconds
    }

    /// The CPU seconds one more chunk costs `line` at `chunkBytes`: its CPU seconds there less
    /// those at the largest size it was measured at, over the chunks there less the chunks at
    /// that size. `nil` at the largest size itself (no difference to take), or when the line was
    /// not measured at both.
    public func cpuSecondsPerChunk(_ line: String, chunkBytes: Int) -> Double? {
        guard let point = point(line, chunkBytes: chunkBytes),
            let largest = points.last(where: { $0.line == line }), largest.chunks != point.chunks
        else { return nil }
        return (point.cpuSeconds - largest.cpuSeconds) / Double(point.chunks - largest.chunks)
    }

    /// One line per design and `dd`: throughput in MiB/s against bytes per chunk, for
    /// ``SVGPlot`` with ``SVGPlot/Axis/chunkBytes`` and ``SVGPlot/Axis/mebibytesPerSecond``.
    ///
    /// - Parameter panel: the one panel's heading.
    public func plotSeries(panel: String) -> [SVGPlot.Series] {
        lines.map { line in
            SVGPlot.Series(
                label: line, panel: panel,
                points: points.filter { $0.line == line }.compactMap { point in
                    point.mebibytesPerSecond.map { (Double(point.chunkBytes), $0) }
                })
        }
    }
}
