#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Holes in the temporary file: a hole chunk (``Chunk/isHole``) becomes `lseek(2)` past it
/// instead of a write of zeros, and with ``FileChunks/HoleMode/always`` so does every block-aligned run
/// of whole blocks of zeros in the data. The commit sets the size with `ftruncate(2)` when the
/// data ends in a hole.
extension FileSink {
    /// Whether writes may leave holes: the destination is a temporary file (a device or a FIFO
    /// written in place gets zeros), and ``Options/holes`` is not ``FileChunks/HoleMode/never``.
    var makesHoles: Bool {
        guard options.holes != .never, case .open(_, .replacing) = state else { return false }
        return true
    }

    /// Whether runs of whole zero blocks become holes: with ``FileChunks/HoleMode/always``, and with
    /// ``FileChunks/HoleMode/auto`` for a source read as data whose blocks say it has holes
    /// (``findHolesInZeroBlocks()``).
    var splitsZeroBlocks: Bool {
        options.holes == .always || (options.holes == .auto && findsHolesInZeroBlocks)
    }

    /// From now on, with ``FileChunks/HoleMode/auto``, runs of whole zero blocks become holes, as with
    /// ``FileChunks/HoleMode/always``: for a sparse source read as data (its hole map distrusted, or not
    /// read for `--verify`), so the copy stays sparse.
    func findHolesInZeroBlocks() {
        findsHolesInZeroBlocks = true
    }

    /// One run of a batch: bytes to write, or a count of bytes to skip.
    private enum Run {
        case data(UnsafeRawPointer, Int)
        case hole(Int)
    }

    /// Writes `chunks`, their holes (and, with ``FileChunks/HoleMode/always``, their zero blocks) as
    /// `lseek(2)` past them, the data between with one `writev(2)` per run.
    ///
    /// - Throws: ``FileError`` (operation `write` or `lseek`) with the destination and errno.
    func writeSparse(_ chunks: [Chunk]) throws(FileError) {
        let descriptor = try descriptorForWriting()
        if !splitsZeroBlocks && !chunks.contains(where: \.isHole) {
            try descriptor.write(chunks, path: destination, system: system)
            sizeAfterHole = nil
            return
        }
        var runs: [Run] = []
        if splitsZeroBlocks {
            var position: Int64
            do throws(ErrorNumber) { position = try descriptor.skip(0, system: system) } catch {
                throw FileError.lseek(path: destination, errno: error)
            }
            for chunk in chunks {
                if chunk.isHole {
                    Self.append(.hole(chunk.count), to: &runs)
                } else {
                    // The bytes stay valid after the closure: `chunks` is kept alive until written.
                    let bytes = chunk.withUnsafeBytes { $0 }
                    Self.appendSplittingZeroBlocks(bytes, at: position, blockSize: blockSize, to: &runs)
                }
                position += Int64(chunk.count)
            }
        } else {
            for chunk in chunks {
                let bytes = chunk.withUnsafeBytes { $0 }
                Self.append(chunk.isHole ? .hole(chunk.count) : .data(bytes.baseAddress!, bytes.count), to: &runs)
            }
        }
        try withExtendedLifetime(chunks) { () throws(FileError) in try write(runs, to: descriptor) }
    }

    /// Writes the data runs with `writev(2)` and skips the holes with `lseek(2)`.
    private func write(_ runs: [Run], to descriptor: Descriptor) throws(FileError) {
        var vectors: [iovec] = []
        func flush() throws(FileError) {
            guard !vectors.isEmpty else { return }
            do throws(ErrorNumber) {
                try vectors.withUnsafeMutableBufferPointer { (buffer) throws(ErrorNumber) in
                    try descriptor.write(gathering: buffer, system: system)
                }
            } catch {
                throw FileError.write(path: destination, errno: error)
            }
            vectors.removeAll(keepingCapacity: true)
        }
        for run in runs {
            switch run {
            case .data(let base, let count):
                vectors.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: base), iov_len: count))
                sizeAfterHole = nil
            case .hole(let count):
                try flush()
                do throws(ErrorNumber) { sizeAfterHole = try descriptor.skip(Int64(count), system: system) } catch {
                    throw FileError.lseek(path: destination, errno: error)
                }
            }
        }
        try flush()
    }

    /// Appends `run`, merged into the last run when both are holes.
    private static func append(_ run: Run, to runs: inout [Run]) {
        if case .hole(let count) = run, count == 0 { return }
        if case .data(_, 0) = run { return }
        if case .hole(let count) = run, case .hole(let previous)? = runs.last {
            runs[runs.count - 1] = .hole(previous + count)
        } else {
            runs.append(run)
        }
    }

    /// Appends `bytes`, which go at file offset `position`, as data runs and hole runs: each
    /// whole block (at a multiple of `blockSize` in the file) of zeros is a hole, the rest data.
    private static func appendSplittingZeroBlocks(
        _ bytes: UnsafeRawBufferPointer, at position: Int64, blockSize: Int, to runs: inout [Run]
    ) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        var dataStart = 0
        var index = Int((Int64(blockSize) - position % Int64(blockSize)) % Int64(blockSize))
        while index + blockSize <= bytes.count {
            if ZeroRegion.isZero(base + index, count: blockSize) {
                var end = index + blockSize
                while end + blockSize <= bytes.count && ZeroRegion.isZero(base + end, count: blockSize) { end += blockSize }
                append(.data(base + dataStart, index - dataStart), to: &runs)
                append(.hole(end - index), to: &runs)
                dataStart = end
                index = end
            } else {
                index += blockSize
            }
        }
        append(.data(base + dataStart, bytes.count - dataStart), to: &runs)
    }
}
