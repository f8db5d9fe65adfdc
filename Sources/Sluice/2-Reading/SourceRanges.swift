/// A regular file read as ranges for the kernel to copy (``Chunk/SourceRange``) instead of
/// bytes: what a copy by a clone or by `copy_file_range(2)` sends down the pipeline, so that
/// every path reaches the sink through the same stages.
///
/// - ``Chunk/SourceRange/Method/clone``: one chunk, the whole file as the `fstat(2)` of its open
///   saw it.
/// - ``Chunk/SourceRange/Method/kernelCopy``: the data extents of the first `size` bytes (the map
///   the reader walked at its open when it kept it, else `lseek(2)`'s `SEEK_DATA` and
///   `SEEK_HOLE` when holes are looked for and the file may have some
///   (``FileStatus/mayHaveHoles``), else all of it as one extent), a chunk for each
///   `sliceSize` bytes of data with the holes between its extents (``Chunk/SourceRange/dataExtents``;
///   its count is its span);
///   then, when the data reaches the size, one range to the end of the file (a file that grew is
///   copied whole, as the pipeline reads it and `cp` copies it); when the file ends in a hole,
///   a hole chunk up to the size.
///
/// Its `lseek(2)` calls run where `next()` is called: the reading stage runs on the reader's
/// thread. Single-pass, one consumer, as ``FileChunks``.
package struct SourceRanges: AsyncSequence, Sendable {
    let file: FileChunks
    let method: Chunk.SourceRange.Method
    let sliceSize: Int64
    let findsHoles: Bool

    /// The ranges of `file` (opened by path, not read: ``FileChunks/kernelCopySource``) for
    /// `method` (a clone or `copy_file_range(2)`), slices of at most `sliceSize` bytes.
    package init(of file: FileChunks, method: Chunk.SourceRange.Method, sliceSize: Int, findsHoles: Bool) {
        precondition(file.kernelCopySource != nil, "only a file opened by path and not read is copied by ranges")
        precondition(method != .kernelCopyToEnd && sliceSize >= 1)
        self.file = file
        self.method = method
        self.sliceSize = Int64(sliceSize)
        self.findsHoles = findsHoles
    }

    package func makeAsyncIterator() -> Iterator {
        let descriptor = file.kernelCopySource!
        let reader = file.reader
        let size = file.status.size
        return Iterator(
            method: method, size: size, sliceSize: sliceSize,
            template: Chunk.SourceRange(descriptor: descriptor, offset: 0, method: method, owner: reader),
            extents: DataExtents(
                descriptor: descriptor, size: size, findsHoles: findsHoles && reader.dataExtents == nil && file.status.mayHaveHoles,
                known: findsHoles ? reader.dataExtents.map { $0[...] } : nil, system: file.system, path: file.path))
    }

    package struct Iterator: AsyncIteratorProtocol {
        let method: Chunk.SourceRange.Method
        let size: Int64
        let sliceSize: Int64
        let template: Chunk.SourceRange
        var extents: DataExtents
        /// The offset of the next byte to send.
        var offset: Int64 = 0
        /// The data extent being sliced.
        var extent: Range<Int64> = 0..<0
        /// Whether no data is left before the size: the rest is a hole.
        var endsInHole = false
        /// Whether the last chunk was sent.
        var isAtEnd = false

        /// The next range or hole; `nil` after the last.
        ///
        /// - Throws: ``FileError`` (`lseek`) when the file system fails a probe it knows;
        ///   `CancellationError`.
        package mutating func next() async throws -> Chunk? {
            try Task.checkCancellation()
            guard !isAtEnd else { return nil }
            if method == .clone {
                isAtEnd = true
                return range(at: 0, .clone, count: Int(size))
            }
            // One chunk for up to a slice of data, with the holes between its extents: a file of
            // 10,000 small extents is a few hundred chunks, not 20,000.
            let start = offset
            var pieces: [Range<Int64>] = []
            var data: Int64 = 0
            while offset < size && data < sliceSize && pieces.count < Self.maximumExtentsPerRange {
                if offset >= extent.upperBound {
                    guard !endsInHole, let next = try extents.next(from: offset) else {
                        endsInHole = true
                        break
                    }
                    extent = next
                }
                if extent.lowerBound > offset {
                    // A hole inside the window; a window spans at most a hole chunk (a longer hole
                    // before its first data is hole chunks of its own).
                    if extent.lowerBound - start > holeLimit { break }
                    offset = extent.lowerBound
                }
                let count = Swift.min(sliceSize - data, extent.upperBound - offset)
                pieces.append(offset..<offset + count)
                data += count
                offset += count
            }
            if !pieces.isEmpty {
                let isAllData = pieces.count == 1 && pieces[0] == start..<offset
                return range(at: start, .kernelCopy, count: Int(offset - start), dataExtents: isAllData ? nil : pieces)
            }
            if offset < size {
                // A hole longer than a window before the next data, or no data left before the
                // size (a hole up to it, which the sink sizes).
                let count = Swift.min(holeLimit, (endsInHole ? size : extent.lowerBound) - offset)
                offset += count
                return try .makeHole(count: Int(count))
            }
            // The data reaches the size: on to the end of file.
            isAtEnd = true
            return endsInHole ? nil : range(at: offset, .kernelCopyToEnd, count: 0)
        }

        /// The most data extents in one range: 32, so the ranges a channel holds (256,
        /// ``Pipeline``'s for ranges) keep at most 8,192 extents, 128 KiB, per file.
        static var maximumExtentsPerRange: Int { 32 }

        /// The longest hole chunk, and the most a range's holes may span: as the reader's
        /// (64 MiB, or the slice when longer).
        private var holeLimit: Int64 { Swift.max(sliceSize, Int64(FileReader.maximumHoleChunk)) }

        private func range(
            at offset: Int64, _ method: Chunk.SourceRange.Method, count: Int, dataExtents: [Range<Int64>]? = nil
        ) -> Chunk {
            .sourceRange(
                Chunk.SourceRange(
                    descriptor: template.descriptor, offset: offset, method: method, dataExtents: dataExtents,
                    owner: template.owner),
                count: count)
        }
    }
}

/// The data extents of a file, in order: those of the map its reader kept (`known`), else asked
/// of `lseek(2)` (`SEEK_DATA`, `SEEK_HOLE`) when `findsHoles`, else all of the file as one.
struct DataExtents {
    let descriptor: Descriptor
    let size: Int64
    var findsHoles: Bool
    var known: ArraySlice<Range<Int64>>?
    let system: SystemCalls
    let path: Pathname

    /// The next data extent at or after `offset`, clipped to the size; `nil` once no data is
    /// left before the size.
    ///
    /// - Throws: ``FileError`` (`lseek`) when the file system fails a probe it knows.
    mutating func next(from offset: Int64) throws(FileError) -> Range<Int64>? {
        while known != nil {
            guard let next = known?.popFirst() else { return nil }
            let (start, end) = (Swift.max(next.lowerBound, offset), Swift.min(next.upperBound, size))
            if start < end { return start..<end }
        }
        guard findsHoles else { return offset..<size }
        do throws(ErrorNumber) {
            guard let data = try descriptor.nextData(from: offset, system: system) else { return nil }
            let end = try descriptor.nextHole(from: data, system: system) ?? size
            return Swift.min(data, size)..<min(end, size)
        } catch where error.meansNotSupportedHere {
            findsHoles = false  // a file system that does not know: all data
            return offset..<size
        } catch {
            throw FileError.lseek(path: path, errno: error)
        }
    }
}
