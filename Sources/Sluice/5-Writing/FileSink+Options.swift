extension FileSink {
    /// How a ``FileSink`` treats an existing destination, durability and the source's
    /// attributes.
    public struct Options: Sendable, Hashable {
        /// Replace an existing regular file or symbolic link (`--force`). Default `false`.
        public var replacesExisting: Bool
        /// `fsync(2)` the file and its directory before and after the rename. Default `true`;
        /// `false` is `--no-fsync`.
        public var synchronizes: Bool
        /// Give the file the source's permission bits, access and modification times, and owner
        /// and group where permitted (`--preserve`); set-user-ID and set-group-ID only when the
        /// owner and group are kept. Default `false`: the rules in ``FileSink`` apply.
        public var preservesAttributes: Bool
        /// Give the file the source's modification time (to the nanosecond the file system
        /// keeps), as `gzip` gives it to the files it writes, and nothing else of the source's:
        /// the permission bits, owner and access time follow the rules in ``FileSink``. Only a
        /// regular source has a time to give; a file written in place (a device, a FIFO) keeps
        /// its own. Default `false` (as `cp` without `-p`); implied by ``preservesAttributes``.
        public var preservesModificationTime: Bool
        /// Whether the file gets holes: for ``FileChunks/HoleMode/auto`` the holes that come as hole
        /// chunks (``Chunk/isHole``); for ``FileChunks/HoleMode/always`` also every run of zeros that
        /// covers a whole block of the file system (`st_blksize`, at a multiple of it); for
        /// ``FileChunks/HoleMode/never`` none, every hole written as zeros. A destination written in
        /// place (a device, a FIFO) always gets zeros. Default ``FileChunks/HoleMode/auto``.
        public var holes: FileChunks.HoleMode
        /// Whether ``FileSink/commit()`` also `fsync(2)`s the destination's directory after the
        /// rename. Default `true`. `false` is for a caller that commits many files into a few
        /// directories and syncs each directory once for all of them (as ``Copier`` does): the
        /// data is still synced before the rename, but the rename is durable only once the
        /// caller has synced the directory.
        public var synchronizesDirectory = true
        /// Whether a file to be sealed (``FileSink/seal()``) is a named temporary file, closed
        /// once sealed, so that a batch waiting for its `syncfs(2)` holds no descriptor per file
        /// (under a low `ulimit -n`: ``DescriptorBudget/sealedFiles`` 0); otherwise it is unnamed
        /// (`O_TMPFILE`) and kept open until it is named.
        var closesSealedFile = false
        /// With ``preservesAttributes``, whether the file also gets every extended attribute of
        /// the source (xattr(7): `user.*`, `security.*`, `trusted.*`), as `cp -a` gives them,
        /// read from the source's descriptor (``FileSink/preserveAttributes(of:at:)``) and set on
        /// the open file before the commit point, so no file has its name without them.
        var preservesExtendedAttributes = false

        /// Creates options; the defaults are durable, refuse to overwrite and keep none of the
        /// source's attributes but its permission bits.
        public init(
            replacesExisting: Bool = false, synchronizes: Bool = true, preservesAttributes: Bool = false,
            preservesModificationTime: Bool = false, holes: FileChunks.HoleMode = .auto
        ) {
            self.replacesExisting = replacesExisting
            self.synchronizes = synchronizes
            self.preservesAttributes = preservesAttributes
            self.preservesModificationTime = preservesModificationTime
            self.holes = holes
        }
    }
}

// The spellings of 0.2, for one release.
extension FileSink.Options {
    /// The 0.2 name of ``holes``.
    @available(*, deprecated, renamed: "holes")
    public var sparse: FileChunks.HoleMode { get { holes } set { holes = newValue } }

    /// The 0.2 spelling of ``init(replacesExisting:synchronizes:preservesAttributes:preservesModificationTime:holes:)``.
    @available(*, deprecated, renamed: "init(replacesExisting:synchronizes:preservesAttributes:preservesModificationTime:holes:)")
    public init(
        replacesExisting: Bool = false, synchronizes: Bool = true, preservesAttributes: Bool = false,
        preservesModificationTime: Bool = false, sparse: FileChunks.HoleMode
    ) {
        self.init(
            replacesExisting: replacesExisting, synchronizes: synchronizes, preservesAttributes: preservesAttributes,
            preservesModificationTime: preservesModificationTime, holes: sparse)
    }
}
