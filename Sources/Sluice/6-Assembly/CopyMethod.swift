/// How the data of a copy got from the source to the destination.
///
/// For a regular file to a regular file with no transform, a ``Copier`` takes the first path
/// of a fixed table (<doc:CopyPaths>) that the kernel does not refuse; every other copy runs the ``pipeline``. Whatever the path,
/// the destination is a temporary file renamed into place at the commit point, synced unless
/// asked not to, with progress and cancellation (see the Copy paths article).
public enum CopyMethod: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `ioctl(2)` `FICLONE`: the destination shares the source's extents; one call, no data
    /// copied, no space used. Not sliced: progress jumps from 0 to the whole size.
    case clone
    /// `copy_file_range(2)` of the source's data extents (`SEEK_DATA`/`SEEK_HOLE`), in slices
    /// of a few MiB, each reported as progress, cancellation checked between them; the holes
    /// between them stay holes and `ftruncate(2)` sets the final size.
    case kernelCopy = "copy_file_range"
    /// Sluice's own pipeline (``Pipeline``): reads, a bounded channel, writes, all in user
    /// space; the data passes through it, so it has a CRC-32.
    case pipeline

    /// The case named `rawValue`: `clone`, `copy_file_range` or `pipeline`; `nil` for any other name.
    public init?(rawValue: String) {
        guard let named = Self.named(rawValue) else { return nil }
        self = named
    }

    /// The name `-v` prints: `clone`, `copy_file_range` or `pipeline`.
    public var description: String { rawValue }

    /// Whether the data passes through Sluice's memory, so that a CRC-32 of it can be
    /// computed (``CopyReport/crc32``).
    package var passesThroughUserSpace: Bool { self == .pipeline }

    /// A path that was tried and gave way to the next: the kernel refused it (the `sluice`
    /// command's `-v` line).
    package struct Refusal: Sendable, Hashable, CustomStringConvertible {
        /// The method refused.
        package var method: CopyMethod
        /// Why: the error number of the call, or `nil` for a `copy_file_range(2)` that
        /// copied nothing before the size the source reported.
        package var errno: ErrorNumber?

        /// Creates a refusal.
        package init(method: CopyMethod, errno: ErrorNumber?) {
            self.method = method
            self.errno = errno
        }

        /// `clone refused: Operation not supported`.
        package var description: String {
            "\(method) refused: " + (errno?.description ?? "the source ended before its reported size")
        }
    }

}
