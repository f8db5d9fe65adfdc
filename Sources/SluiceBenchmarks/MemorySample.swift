/// One sample of a run's memory: time since the start, resident set size, and bytes buffered
/// between producer and consumer.
public struct MemorySample: Sendable, Hashable, Codable {
    /// Seconds since the run started.
    public var seconds: Double
    /// Resident set size in bytes (`VmRSS`).
    public var residentBytes: Int64
    /// Bytes produced and not yet consumed.
    public var bufferedBytes: Int64

    /// Creates a sample.
    public init(seconds: Double, residentBytes: Int64, bufferedBytes: Int64) {
        self.seconds = seconds
        self.residentBytes = residentBytes
        self.bufferedBytes = bufferedBytes
    }
}
