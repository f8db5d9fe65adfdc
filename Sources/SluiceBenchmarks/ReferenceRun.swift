/// One timed run of a reference command (`cp`, `cat`) on the same input, in the same invocation
/// as the designs: a row of the CSV like theirs.
public struct ReferenceRun: Sendable, Hashable {
    /// The command's name: `cp` or `cat`.
    public var command: String
    /// Bytes copied (the input's size: a reference run that fails stops the benchmark).
    public var bytesMoved: Int64
    /// Wall-clock seconds from spawn to exit.
    public var seconds: Double

    /// Creates a reference run record.
    public init(command: String, bytesMoved: Int64, seconds: Double) {
        self.command = command
        self.bytesMoved = bytesMoved
        self.seconds = seconds
    }

    /// Throughput in MiB per second.
    public var mebibytesPerSecond: Double? {
        seconds > 0 ? Double(bytesMoved) / 1_048_576 / seconds : nil
    }
}
