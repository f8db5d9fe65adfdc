#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The temporary file beside the destination's ``FileSink/location``, and the path its
/// extended attributes are reached by.
extension FileSink {
    /// Creates `.sluice-<random>.tmp` with `O_CREAT | O_EXCL` and `mode` (which the kernel
    /// narrows by the default ACL or the umask) in the destination's directory.
    static func createTemporaryFile(
        beside destination: FileLocation, mode: UInt32, system: SystemCalls
    ) throws(FileError) -> (FileDescriptor, FileLocation) {
        while true {
            let temporary = destination.sibling(FileDescriptor.uniqueName(prefix: ".sluice-"))
            do {
                return (try temporary.open(O_WRONLY | O_CREAT | O_EXCL, permissions: mode_t(mode), system: system), temporary)
            } catch where error.errno == .fileExists {
                continue
            } catch {
                // Name the destination, not the temporary file, in the message.
                throw FileError.create(path: destination.path, errno: error.errno ?? .ioError, cause: error)
            }
        }
    }

    /// The path the `*xattr(2)` calls reach the destination by: its own for a plain path, a
    /// short `/proc/self/fd/<directory>/<name>` for an entry of an open directory.
    static func attributePath(of location: FileLocation) -> FilePath {
        guard let directory = location.directory else { return location.path }
        return ExtendedAttributes.procPath(location.name, in: directory)
    }
}
