/// What `lseek(2)`'s `SEEK_DATA` and `SEEK_HOLE` say of a regular file, checked against the
/// blocks `fstat(2)` says it has before a copy trusts it.
///
/// Those maps have lied on real systems: OpenZFS while a file was appended to, virtiofs, APFS
/// sparse images (coreutils fixed `cp` for such maps several times); a copy that believes a
/// hole where there is data writes zeros in its place. A map is distrusted when it claims fewer
/// data bytes than the allocated blocks imply, beyond ``slack``, or data past the end of the
/// file. A file whose map says "all hole" and that has no block (`truncate -s 1G`) agrees.
struct HoleMap: Sendable, Hashable {
    /// Bytes in the data extents, up to the size.
    var dataBytes: Int64
    /// The data extents found.
    var extents: Int
    /// Whether the map reported data at or past the end of the file.
    var reachesPastEnd: Bool
    /// The data extents, up to the size, in order, when there are at most
    /// ``maximumRecordedExtents`` (a kernel copy follows them instead of asking `lseek(2)`
    /// again, two calls per extent); `nil` for more.
    var dataExtents: [Range<Int64>]? = []

    /// The most extents ``dataExtents`` keeps: 64 Ki, 1 MiB of ranges.
    static let maximumRecordedExtents = 1 << 16

    /// What allocation may hold beyond the data a map claims: each extent rounded up to a 4 KiB
    /// block, and 64 KiB more for metadata (indirect and extent blocks) and preallocation at
    /// the end of the file.
    static let slack: Int64 = 64 << 10
    static let block: Int64 = 4096

    /// Whether a file with `allocatedBytes` (`st_blocks` × 512) can have this map.
    func agrees(withAllocated allocatedBytes: Int64) -> Bool {
        guard !reachesPastEnd else { return false }
        return allocatedBytes <= dataBytes + Int64(extents) * Self.block + Self.slack
    }

    /// Walks the map of the open file from 0 to `size`. The descriptor's offset moves.
    ///
    /// - Returns: the map; `nil` where the file system does not answer `SEEK_DATA` (then there
    ///   is no map to trust: the file is read as data).
    static func read(_ descriptor: Descriptor, size: Int64, system: SystemCalls) -> HoleMap? {
        var map = HoleMap(dataBytes: 0, extents: 0, reachesPastEnd: false)
        var offset: Int64 = 0
        while offset < size {
            let data: Int64?
            do throws(ErrorNumber) { data = try descriptor.nextData(from: offset, system: system) } catch { return nil }
            guard let data else { break }
            guard data < size else {
                map.reachesPastEnd = true
                break
            }
            let end: Int64
            do throws(ErrorNumber) { end = try descriptor.nextHole(from: data, system: system) ?? size } catch { return nil }
            if end > size { map.reachesPastEnd = true }
            map.dataBytes += min(end, size) - data
            map.extents += 1
            if map.extents > maximumRecordedExtents {
                map.dataExtents = nil
            } else if end > data {
                map.dataExtents?.append(data..<min(end, size))
            }
            guard end > data else { break }
            offset = end
        }
        return map
    }
}
