extension FileChunks {
    /// Whether a copy makes holes in its destination: `cp --sparse`'s three answers.
    ///
    /// A hole is a range of a file that reads as zeros and has no blocks on the disk
    /// (`lseek(2)`'s `SEEK_DATA` and `SEEK_HOLE` find them). A regular destination gets one with
    /// `lseek(2)` past the range (then a write or `ftruncate(2)` after it); a destination that
    /// cannot seek (a pipe, standard output) and the input of a compression get the zeros.
    public enum HoleMode: String, Sendable, Hashable, CaseIterable {
        /// The source's holes become holes (found with `SEEK_DATA`/`SEEK_HOLE`); zeros written as
        /// data stay data. The default, as `cp`'s.
        case auto
        /// As ``auto``, and every run of zeros that covers at least one whole file-system block of
        /// the destination (`st_blksize`) becomes a hole too: what a decompressed disk image needs.
        case always
        /// No holes: the source's holes are read as zeros and written as data, every block allocated.
        case never

        /// The case named `rawValue`: `auto`, `always` or `never`, as `cp --sparse`; `nil` for any other name.
        public init?(rawValue: String) {
            guard let named = Self.named(rawValue) else { return nil }
            self = named
        }

        /// Whether a source is read by its hole map (`SEEK_DATA`/`SEEK_HOLE`): not with ``never``,
        /// and not when the copy is `verifying` it (the CRC-32 a verification checks is then of the
        /// bytes `read(2)` gave, never of a map's holes, which may hide data; the copy finds its holes
        /// as whole zero blocks instead). The `findsHoles` to open a source with.
        package func findsHoles(verifying: Bool) -> Bool {
            self != .never && !verifying
        }
    }
}

extension FileChunks {
    /// The 0.2 name of ``HoleMode``.
    @available(*, deprecated, renamed: "HoleMode")
    public typealias SparseMode = HoleMode
}
