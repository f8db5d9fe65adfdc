extension Copier {
    /// Whether a copy may make the destination share the source's extents (a clone, ioctl_ficlone(2)):
    /// `cp --reflink`'s three answers.
    public enum ReflinkMode: String, Sendable, Hashable, CaseIterable {
        /// Clone where the file system can (XFS with reflink, Btrfs), else copy. The default.
        case auto
        /// Clone, or fail with nothing left at the destination where no clone is possible.
        case always
        /// Never share extents: every block of the destination is its own. On a file system that
        /// clones, `copy_file_range(2)` would share them too, so it is not used there either.
        case never

        /// The case named `rawValue`: `auto`, `always` or `never`, as `cp --reflink`; `nil` for any other name.
        public init?(rawValue: String) {
            guard let named = Self.named(rawValue) else { return nil }
            self = named
        }
    }
}
