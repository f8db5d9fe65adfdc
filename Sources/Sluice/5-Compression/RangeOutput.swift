/// The range's bytes out of a run of output: what is before the range, or already out (a
/// member decoded again from its start), is dropped; what is past it ends the run
/// (``Complete``).
struct RangeOutput {
    let range: Range<Int64>
    let emit: (Chunk) async throws -> Void
    /// The output offset of the next byte given to ``write(_:)``.
    var position: Int64 = 0
    /// The bytes before this offset are out (or are before the range).
    private(set) var emitted: Int64

    init(range: Range<Int64>, emit: @escaping (Chunk) async throws -> Void) {
        self.range = range
        self.emit = emit
        emitted = range.lowerBound
    }

    /// Thrown out of a run of output once the range's last byte is out.
    struct Complete: Error {}

    /// Whether the range's last byte is out.
    var isComplete: Bool { emitted >= range.upperBound }

    /// Writes `chunks`, which start at output offset `offset`.
    mutating func write(_ chunks: [Chunk], at offset: Int64) async throws {
        position = offset
        for chunk in chunks where !isComplete { try await write(chunk) }
    }

    /// Writes `chunk`, which starts at ``position``: the part of it in the range and not yet out.
    mutating func write(_ chunk: Chunk) async throws {
        let start = position
        position += Int64(chunk.count)
        precondition(start <= emitted || isComplete, "a gap in a range's output")
        let lower = max(emitted, start), upper = min(range.upperBound, position)
        guard lower < upper else { return }
        if lower == start && upper == position {
            try await emit(chunk)
        } else {
            try await emit(chunk.withUnsafeBytes { Chunk($0[Int(lower - start)..<Int(upper - start)]) })
        }
        emitted = upper
    }
}
