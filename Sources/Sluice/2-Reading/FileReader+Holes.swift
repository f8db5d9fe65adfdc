/// Reading a regular file as its data and its holes: `lseek(2)`'s `SEEK_DATA` and `SEEK_HOLE`
/// find the extents, a hole comes out as hole chunks (``Chunk/hole(count:)``) and data as
/// chunks read with `read(2)`. Chunks never straddle the boundary of an extent.
///
/// A hole chunk holds no memory, so for the copier's own pipelines (``takesLongHoles``) it may be
/// longer than a data chunk: up to ``maximumHoleChunk`` or the chunk size, whichever is larger,
/// so that a gigabyte of hole is 16 chunks, not 1,024. For any other reader it is at most the
/// chunk size: a `map` or a transform that makes data of it then holds no more than a data chunk.
extension FileReader {
    /// The longest hole chunk, unless the chunk size is longer: 64 MiB.
    static let maximumHoleChunk = 64 << 20

    /// The longest hole chunk for this reader.
    private nonisolated var holeChunkLimit: Int64 { Int64(takesLongHoles ? max(chunkSize, Self.maximumHoleChunk) : chunkSize) }

    /// Where the reads stand in a file read extent by extent.
    struct ExtentCursor {
        /// The offset of the next byte to deliver.
        var offset: Int64
        /// The current data extent, whose reads the descriptor's offset follows; empty before
        /// the first is looked for.
        var data: Range<Int64> = 0..<0
    }

    /// The next chunk of a file read extent by extent: a hole up to the next data (or, past
    /// the last data, up to the size `fstat(2)` reports now), else data up to the next hole.
    /// The end of the file is still where a read returns 0 or fewer bytes than the extent
    /// holds (a file that shrank, a /sys file whose size says 4096).
    ///
    /// Runs on the reader's thread only. A file system that does not answer `SEEK_DATA` turns
    /// the rest into plain reads.
    ///
    /// - Throws: ``FileError`` (operation `read`, `lseek` or `fstat`).
    nonisolated func readExtent() throws -> Chunk? {
        guard var cursor = extents, let descriptor = openDescriptor else { preconditionFailure("readExtent without extents") }
        if cursor.offset >= cursor.data.upperBound {
            let found: Int64?
            do throws(ErrorNumber) {
                found = try descriptor.nextData(from: cursor.offset, system: system)
            } catch {
                // A file system that does not know its holes: plain reads from here on.
                extents = nil
                do { try descriptor.seek(to: cursor.offset, system: system) } catch {
                    throw FileError.lseek(path: path, errno: error)
                }
                return try readChunk()
            }
            guard let data = found else {
                // Only a hole is left: up to the size the file has now.
                let size: Int64
                do { size = try descriptor.status().size } catch { throw FileError.fstat(path: path, errno: error) }
                guard size > cursor.offset else { return endOfFile() }
                let count = Int(min(holeChunkLimit, size - cursor.offset))
                cursor.offset += Int64(count)
                extents = cursor
                return try .makeHole(count: count)
            }
            do throws(ErrorNumber) {
                let end = try descriptor.nextHole(from: data, system: system) ?? data
                try descriptor.seek(to: data, system: system)
                cursor.data = data..<max(end, data)
            } catch {
                throw FileError.lseek(path: path, errno: error)
            }
            extents = cursor
        }
        if cursor.offset < cursor.data.lowerBound {
            let count = Int(min(holeChunkLimit, cursor.data.lowerBound - cursor.offset))
            cursor.offset += Int64(count)
            extents = cursor
            return try .makeHole(count: count)
        }
        let wanted = Int(min(Int64(chunkSize), cursor.data.upperBound - cursor.offset))
        let system = self.system
        let path = self.path
        let chunk = try Chunk(allocating: wanted) { (buffer) throws(FileError) -> Int in
            do throws(ErrorNumber) { return try descriptor.readFully(into: buffer, system: system) } catch {
                throw FileError.read(path: path, errno: error)
            }
        }
        if chunk.isEmpty { return endOfFile() }
        cursor.offset += Int64(chunk.count)
        if chunk.count < wanted { cursor.data = cursor.data.lowerBound..<Int64.max }  // ends at the next read of 0
        extents = cursor
        return chunk
    }
}
