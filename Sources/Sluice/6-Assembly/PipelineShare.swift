/// The part of a shared `ByteBudget` one file's pipeline is given, and the chunk size and
/// channel capacity that keep the pipeline within it.
///
/// A pipeline holds at most, in chunks of `chunkSize` bytes: each channel full (`capacity`; a
/// batch the next stage took from a channel counts against it until that stage asks for more,
/// ``BoundedChannel/takeAvailable(upTo:)``), and one chunk in each stage outside the channels
/// (the reader's, and a transform's input and output):
/// `bytes = chunkSize × (capacity × channels + channels + 1)`, where `channels` is 1 for a
/// copy and 2 with a transform. That is what the file is charged, whichever path it then takes
/// (a clone or kernel copy buffers nothing, but the path is known only once the file is open).
/// A transform's own state (zlib's window and tables, about 300 KiB for deflate) is not counted.
struct PipelineShare: Equatable {
    /// The chunk size the file is read in.
    var chunkSize: Int
    /// The channel capacity of its pipeline, in chunks.
    var capacity: Int
    /// The bytes charged to the budget while the file is in flight.
    var bytes: Int

    /// The share for a file of `fileSize` bytes (`nil`: unknown).
    ///
    /// - Parameters:
    ///   - fileSize: the source's size; its chunk size is `min(chunkSize, fileSize + 1)` rounded
    ///     up to 4 KiB, so a small file does not take a large chunk.
    ///   - chunkSize: the largest chunk.
    ///   - capacity: the largest channel capacity.
    ///   - channels: 1 for a copy, 2 with a transform.
    ///   - share: the bytes one file may take: the budget divided by the files in flight.
    ///     When even one chunk per channel exceeds it, the file gets capacity 1 and is charged
    ///     that; the budget then grants it alone if it exceeds the whole budget.
    init(fileSize: Int64?, chunkSize: Int, capacity: Int, channels: Int, share: Int) {
        var chunk = chunkSize
        if let fileSize, fileSize >= 0, fileSize < Int64(chunkSize) {
            chunk = min(chunkSize, Int((fileSize + 1 + 4095) / 4096 * 4096))
        }
        let fixed = channels + 1
        let perCapacity = channels
        let fitting = (share / chunk - fixed) / perCapacity
        self.chunkSize = chunk
        self.capacity = max(1, min(capacity, fitting))
        self.bytes = chunk * (perCapacity * self.capacity + fixed)
    }
}
