#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Descriptor {
    /// Writes every byte of `chunk` (see ``write(contentsOf:system:)``), naming `path` in the error.
    ///
    /// - Throws: ``FileError`` (operation `write`) with `path` and the errno.
    package func write(_ chunk: Chunk, path: Pathname, system: SystemCalls = .live) throws(FileError) {
        do {
            try chunk.withUnsafeBytes { (buffer) throws(ErrorNumber) in try write(contentsOf: buffer, system: system) }
        } catch {
            throw .write(path: path, errno: error)
        }
    }
}

extension Descriptor {
    /// Writes every byte of `chunks`, in order, with as few `writev(2)` calls as they allow
    /// (see ``write(gathering:system:)``), naming `path` in the error.
    ///
    /// - Throws: ``FileError`` (operation `write`) with `path` and the errno.
    package func write(_ chunks: [Chunk], path: Pathname, system: SystemCalls = .live) throws(FileError) {
        if chunks.count == 1 { return try write(chunks[0], path: path, system: system) }
        var vectors = chunks.map { iovec(iov_base: $0.storage.base, iov_len: $0.count) }
        do {
            try withExtendedLifetime(chunks) { () throws(ErrorNumber) in
                try vectors.withUnsafeMutableBufferPointer { (buffer) throws(ErrorNumber) in
                    try write(gathering: buffer, system: system)
                }
            }
        } catch {
            throw .write(path: path, errno: error)
        }
    }
}
