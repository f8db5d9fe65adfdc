/// A chunk that stands for a range of a source file instead of holding its bytes: the element a
/// copy that the kernel makes sends down the pipeline, so that clones, `copy_file_range(2)`
/// slices, holes and bytes reach the destination through the same stages and the same sink, and
/// progress, cancellation, the rate and the commit apply to each path once.
///
/// A sink that copies ranges itself (`SourceRangeSink`: ``FileSink``) does so inside the kernel;
/// for any other, the pipeline reads the range first (``readingSourceRange()``), so a sink of the
/// library's users gets bytes. Such a chunk weighs nothing in a channel's byte budget. Its bytes
/// (``withUnsafeBytes(_:)``) are not the range's: only the stages of the pipeline see it, never a
/// transform.
extension Chunk {
    /// A range of a source descriptor, for a sink to copy.
    package struct SourceRange: Sendable {
        /// How the sink copies the range.
        package enum Method: Sendable, Equatable {
            /// The whole file, by a clone (`FICLONE`): the destination shares the source's
            /// extents. Sent once, first.
            case clone
            /// `copy_file_range(2)` of the chunk's ``Chunk/count`` bytes at ``offset``.
            case kernelCopy
            /// `copy_file_range(2)` from ``offset`` on to the end of the file, as far as it goes
            /// now (a file that grew since its `fstat(2)`); the chunk's count is 0, and the bytes
            /// the sink finds are what the range weighs in the copy's totals.
            case kernelCopyToEnd
        }

        /// The source, open for reading; the range is read at explicit offsets, so its offset
        /// does not matter.
        package let descriptor: Descriptor
        /// The first byte of the range in the source.
        package let offset: Int64
        package let method: Method
        /// For ``Method/kernelCopy``: the data extents inside the range, in order, when it has
        /// holes between them (the sink skips those); `nil` when all of it is data.
        package let dataExtents: [Range<Int64>]?
        /// What keeps `descriptor` open while the chunk exists (the reader that owns it), if
        /// anything must.
        let owner: (any AnyObject & Sendable)?

        package init(
            descriptor: Descriptor, offset: Int64, method: Method, dataExtents: [Range<Int64>]? = nil,
            owner: (any AnyObject & Sendable)? = nil
        ) {
            self.descriptor = descriptor
            self.offset = offset
            self.method = method
            self.dataExtents = dataExtents
            self.owner = owner
        }

        /// The data of a range of `count` bytes, in order: ``dataExtents``, or all of it.
        package func data(count: Int) -> [Range<Int64>] {
            dataExtents ?? [offset..<offset + Int64(count)]
        }
    }

    /// A chunk that stands for `count` bytes of `range`'s source at its offset (0 for
    /// ``SourceRange/Method/kernelCopyToEnd``).
    package static func sourceRange(_ range: SourceRange, count: Int) -> Chunk {
        precondition(count >= 0, "count must not be negative")
        return Chunk(storage: ChunkStorage.makeHole(count: count, zeros: ZeroRegion.small, range: range))
    }

    /// The range of a source this chunk stands for, or `nil` for a chunk of bytes or a hole.
    package var sourceRange: SourceRange? { storage.header.range }

    /// The chunks of bytes this one stands for: itself when it holds bytes or is a hole; for a
    /// range of a source, its bytes read with `pread(2)` in chunks of at most `chunkSize`, to
    /// the end of the file for a clone and for ``SourceRange/Method/kernelCopyToEnd`` (as the
    /// kernel would copy them). For a sink that does not copy ranges itself. Blocks: call it on
    /// a thread of a ``BlockingIOExecutor``.
    ///
    /// - Throws: ``FileError`` (operation `read`, named `path`): of `pread(2)`, or code `io`
    ///   when the file ends before the range does (it shrank since the ranges were planned,
    ///   and the holes after it would be longer than the file).
    package func readingSourceRange(chunkSize: Int, path: Pathname) throws(FileError) -> [Chunk] {
        guard let range = sourceRange else { return [self] }
        var chunks: [Chunk] = []
        let toEnd = range.method != .kernelCopy
        let pieces = toEnd ? [range.offset..<Int64.max] : range.data(count: count)
        var cursor = range.offset
        for piece in pieces {
            appendHole(piece.lowerBound - cursor, to: &chunks)
            var offset = piece.lowerBound
            while offset < piece.upperBound {
                let wanted = Int(min(Int64(chunkSize), piece.upperBound - offset))
                let chunk = try Chunk(allocating: wanted) { (buffer) throws(FileError) -> Int in
                    do throws(ErrorNumber) {
                        return try range.descriptor.read(fromAbsoluteOffset: offset, into: buffer)
                    } catch {
                        throw FileError.read(path: path, errno: error)
                    }
                }
                if chunk.isEmpty {
                    guard toEnd else {
                        throw FileError(code: .io, operation: .read, path: path, reason: "it shrank while it was copied")
                    }
                    break
                }
                chunks.append(chunk)
                offset += Int64(chunk.count)
            }
            cursor = offset
        }
        if !toEnd { appendHole(range.offset + Int64(count) - cursor, to: &chunks) }
        return withExtendedLifetime(range.owner) { chunks }
    }

    /// Appends a hole of `count` bytes (none when <= 0) in chunks of at most the reader's
    /// longest (``FileReader/maximumHoleChunk``).
    private func appendHole(_ count: Int64, to chunks: inout [Chunk]) {
        var left = count
        while left > 0 {
            let piece = Swift.min(left, Int64(FileReader.maximumHoleChunk))
            chunks.append(.hole(count: Int(piece)))
            left -= piece
        }
    }
}
