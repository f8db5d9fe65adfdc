/// One timed run of a reference command (`cp`, `cat`, `dd`) on the same input, in the same
/// invocation as the designs: a row of the CSV like theirs.
public struct ReferenceRun: Sendable, Hashable {
    /// The command's name: `cp`, `cat` or `dd`.
    public var command: String
    /// Bytes copied (the input's size: a reference run that fails stops the benchmark).
    public var bytesMoved: Int64
    /// Wall-clock seconds from spawn to exit.
    public var seconds: Double
    /// The block size the command was given (`dd bs=`), in bytes; `nil` for a command that
    /// chooses its own (`cp`, `cat`).
    public var chunkBytes: Int?
    /// CPU seconds of the command, user and system, from `wait4(2)`'s `rusage` on its process.
    public var cpuSeconds: Double

    /// Creates a reference run record.
    public init(command: String, bytesMoved: Int64, seconds: Double, chunkBytes: Int? = nil, cpuSeconds: Double = 0) {
        self.command = command
        self.bytesMoved = bytesMoved
        self.seconds = seconds
        self.chunkBytes = chunkBytes
        self.cpuSeconds = cpuSeconds
    }

    /// Throughput in MiB per second.
    public var mebibytesPerSecond: Double? {
        seconds > 0 ? Double(bytesMoved) / 1_048_576 / seconds : nil
    }
}
