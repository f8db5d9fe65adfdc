#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension FileDescriptor {
    /// Writes every byte of `chunk` (see ``write(contentsOf:system:)``), naming `path` in the error.
    ///
    /// - Throws: ``FileError`` (operation `write`) with `path` and the errno.
    public func write(_ chunk: Chunk, path: FilePath, system: SystemCalls = .live) throws(FileError) {
        do {
            try chunk.withUnsafeBytes { (buffer) throws(Errno) in try write(contentsOf: buffer, system: system) }
        } catch {
            throw .write(path: path, errno: error)
        }
    }
}
