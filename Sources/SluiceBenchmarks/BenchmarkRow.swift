/// One row of `sluice bench`'s table: a design with a consumer over its counted runs, whose
/// figures come from the runs that succeeded only, and which counts the runs that failed.
///
/// A failed run is never the figure of a row that reads "ok": with some failures, the row's
/// median is that of its successes and its outcome says how many failed and how (`2 of 5
/// capacity-exceeded`); with only failures, it has no speed, its peaks are those of the failed
/// runs (how far they got), and its outcome says all failed (`all 5 capacity-exceeded`).
public struct BenchmarkRow: Sendable {
    /// Every counted run, in the order measured.
    public let runs: [BenchmarkRun]

    /// The runs that completed.
    public var succeeded: [BenchmarkRun] { runs.filter { $0.outcome == .ok } }

    /// How many runs failed.
    public var failureCount: Int { runs.count - succeeded.count }

    /// Whether every run failed.
    public var allFailed: Bool { !runs.isEmpty && failureCount == runs.count }

    /// The runs the figures are of: those that succeeded, or every run when none did.
    public var counted: [BenchmarkRun] { allFailed ? runs : succeeded }

    /// The counted run of median time, its peaks the medians of the counted runs' peaks (its
    /// samples are that run's, for the plot).
    public var median: BenchmarkRun? {
        let sorted = counted.sorted { $0.seconds < $1.seconds }
        guard !sorted.isEmpty else { return nil }
        var middle = sorted[sorted.count / 2]
        middle.peakResidentBytes = Int64(counted.map { Double($0.peakResidentBytes) }.median)
        middle.peakBufferedBytes = Int64(counted.map { Double($0.peakBufferedBytes) }.median)
        return middle
    }

    /// The median run of those that succeeded, for ratios between rows; `nil` when none did.
    public var medianOfSuccesses: BenchmarkRun? { allFailed ? nil : median }

    /// The lowest and highest speed of the runs that succeeded, in MiB/s; `nil` when none did.
    public var speedRange: ClosedRange<Double>? {
        let speeds = succeeded.compactMap(\.mebibytesPerSecond)
        guard let low = speeds.min(), let high = speeds.max() else { return nil }
        return low...high
    }

    /// The lowest and highest peak RSS of the counted runs, in bytes.
    public var peakResidentRange: ClosedRange<Int64> {
        let peaks = counted.map(\.peakResidentBytes)
        return (peaks.min() ?? 0)...(peaks.max() ?? 0)
    }

    /// `ok` when every run succeeded; else each kind of failure with its count of the runs
    /// (`2 of 5 capacity-exceeded`), or, when every run failed, `all 5 capacity-exceeded`.
    public var outcome: String {
        guard failureCount > 0 else { return "ok" }
        var kinds: [(name: String, count: Int)] = []
        for run in runs where run.outcome != .ok {
            let name = run.outcome.description
            if let index = kinds.firstIndex(where: { $0.name == name }) { kinds[index].count += 1 } else { kinds.append((name, 1)) }
        }
        if allFailed && kinds.count == 1 { return "all \(runs.count) \(kinds[0].name)" }
        return kinds.map { "\($0.count) of \(runs.count) \($0.name)" }.joined(separator: ", ")
    }

    /// A row of `runs` (at least one).
    public init(_ runs: [BenchmarkRun]) {
        self.runs = runs
    }
}

extension Array where Element == Double {
    /// The median (the mean of the middle two for an even count); 0 for none.
    public var median: Double {
        let sorted = self.sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
