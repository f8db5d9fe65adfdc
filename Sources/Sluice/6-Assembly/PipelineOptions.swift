/// How a chunk pipeline is sized and what it does besides copying, for a caller that tunes a
/// copy: the channels' capacity and byte budget, the CRC-32, a rate limit, a verification of the
/// output.
///
/// One type for every pipeline, whatever its source and sink: a ``Pipeline`` takes it, and
/// ``Copier/FileOptions/pipeline`` holds it for a copier's files that take the pipeline. (Before
/// 0.2 it was `FileCopy.Options`, a type of its own for each source and sink.)
public struct PipelineOptions: Sendable, Hashable {
    /// The count of chunks each channel buffers (>= 1). Default 4.
    public var capacity: Int
    /// An optional bound, in bytes, on what each channel buffers, for sources whose chunks
    /// vary in size. Default `nil` (the count bounds it).
    public var byteBudget: Int?
    /// Whether to compute the CRC-32 of the data for the report. Default `true`. It costs
    /// one pass over the data (``CRC32``) on the reading stage; a copy that prints no report
    /// may skip it. A transform that reports its own CRC-32 (gzip) costs nothing extra.
    public var computesCRC32: Bool
    /// The rate the source's bytes are taken at, or `nil` (default) for no limit
    /// (`--limit-rate`). One ``RateLimiter`` given to every copy of an operation holds the
    /// whole operation to its rate. The stage after the first channel takes each chunk when
    /// the limiter admits it (a token bucket one chunk deep); the reading stage waits for
    /// room in that channel, so memory stays at the channel's bound. Progress counts the
    /// bytes read as that stage lets them through, so it shows the limited rate. The wait is
    /// an asynchronous sleep: no thread is blocked.
    public var rateLimit: RateLimiter?
    /// Whether to read the output back and check it before committing it (`--verify`). Default
    /// `false`. Without a transform the output must hold the source's bytes; with one, the
    /// transform says how its output reads back (``VerifiableTransform``; one that does not is
    /// committed unverified). It needs a ``FileSink``, which reads its file back; any other
    /// sink, or a file written in place, is committed unverified, and the report says why
    /// (``CopyReport/verification``). A difference throws ``VerificationError``, and nothing is
    /// committed. Open its source with `findsHoles: false`
    /// (``FileChunks/open(_:chunkSize:findsHoles:)``): a verified copy reads every byte rather
    /// than believe the file's hole map.
    public var verifiesOutput: Bool

    /// The capacity, in chunks, that buffers about 4 MiB per channel for chunks of
    /// `chunkSize` bytes: 4 chunks of 1 MiB (and more), up to 1,024 chunks of 4 KiB (and less).
    ///
    /// Small chunks need a deep channel to be cheap: a full channel wakes its producer once
    /// per half a channel taken (the low watermark is half the capacity) and the writer
    /// hands up to a channel's worth of chunks to one `writev(2)`, so the cost of a thread
    /// wake-up is shared by hundreds of small chunks instead of paid for two. The bytes
    /// buffered stay at most those of 4 chunks of 1 MiB.
    ///
    /// - Parameter chunkSize: bytes per chunk (>= 1).
    /// - Returns: ``defaultCapacityBytes`` / `chunkSize`, clamped to ``defaultCapacityRange``.
    package static func defaultCapacity(chunkSize: Int) -> Int {
        precondition(chunkSize >= 1, "chunkSize must be at least 1 byte")
        return min(defaultCapacityRange.upperBound, max(defaultCapacityRange.lowerBound, defaultCapacityBytes / chunkSize))
    }

    /// The bytes of chunks ``defaultCapacity(chunkSize:)`` buffers per channel: 4 MiB.
    package static let defaultCapacityBytes = 4 << 20
    /// The fewest and the most chunks ``defaultCapacity(chunkSize:)`` gives.
    package static let defaultCapacityRange = 4...1024

    /// Creates options.
    ///
    /// - Precondition: `capacity >= 1`; `byteBudget`, when given, >= 1.
    public init(
        capacity: Int = 4, byteBudget: Int? = nil, computesCRC32: Bool = true, rateLimit: RateLimiter? = nil,
        verifiesOutput: Bool = false
    ) {
        precondition(capacity >= 1, "capacity must be at least 1 chunk")
        precondition(byteBudget.map { $0 >= 1 } ?? true, "byteBudget must be at least 1 byte")
        self.capacity = capacity
        self.byteBudget = byteBudget
        self.computesCRC32 = computesCRC32
        self.rateLimit = rateLimit
        self.verifiesOutput = verifiesOutput
    }
}

// The spellings of 0.2, for one release: the check was chosen by the caller, among three that
// knew only gzip; the transform says it now (``VerifiableTransform``).
extension PipelineOptions {
    /// How a copy checked its output in 0.2: the same bytes, or gzip's two directions.
    @available(*, deprecated, message: "set verifiesOutput: the transform says how its output is checked (VerifiableTransform)")
    public enum Verification: Sendable, Hashable {
        /// The output holds the source's bytes (a copy).
        case sameBytes
        /// The output is the gzip compression of the source (``ParallelGzipEncoder``).
        case gzipOfSource
        /// The source is gzip and the output its decoded data (``GzipDecoder``).
        case decodedSource
    }

    /// Whether to check the output, as a ``Verification``: ``Verification/sameBytes`` when
    /// ``verifiesOutput``, whatever the transform; setting any case sets ``verifiesOutput``.
    @available(*, deprecated, message: "use verifiesOutput: the transform says how its output is checked (VerifiableTransform)")
    public var verification: Verification? {
        get { verifiesOutput ? .sameBytes : nil }
        set { verifiesOutput = newValue != nil }
    }

    /// Creates options that verify the output when `verification` is not `nil`.
    @available(*, deprecated, message: "use init(capacity:byteBudget:computesCRC32:rateLimit:verifiesOutput:)")
    public init(
        capacity: Int = 4, byteBudget: Int? = nil, computesCRC32: Bool = true, rateLimit: RateLimiter? = nil,
        verification: Verification?
    ) {
        self.init(
            capacity: capacity, byteBudget: byteBudget, computesCRC32: computesCRC32, rateLimit: rateLimit,
            verifiesOutput: verification != nil)
    }
}
