import Sluice

/// Benchmark scenarios for `sluice bench` (filled in by the benchmark work; a placeholder now).
public enum Benchmarks {
    /// The names of the designs a benchmark run can compare.
    public static let designNames: [String] = []
}
