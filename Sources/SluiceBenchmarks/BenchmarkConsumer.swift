/// How fast the benchmark's consumer writes.
public enum BenchmarkConsumer: String, CaseIterable, Sendable, Codable {
    /// Plain file writes, as fast as the disk takes them.
    case fast
    /// Writes throttled to a rate in bytes per second, well below the reader's speed.
    case slow
}
