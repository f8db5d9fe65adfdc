/// What a `TreeWalker` reports.
extension TreeWalker {
    /// One entry of the tree.
    package struct Entry: Sendable {
        /// The directory that holds the entry (for the root, the directory of the path given).
        package let parent: DirectoryHandle
        /// The entry's name in ``parent``: one component, as bytes.
        package let name: Pathname
        /// The path messages use: the root as given joined with ``relativePath``. It may be
        /// longer than `PATH_MAX`; no system call is given it.
        package let path: Pathname
        /// The path below the root: empty for the root itself.
        package let relativePath: Pathname
        /// What `fstatat(2)` said of it (of a link itself unless the policy follows it).
        package let status: FileStatus
        /// Levels below the root: 0 for the root.
        package let depth: Int

        /// The entry as a `FileLocation`: its name in ``parent``.
        package var location: FileLocation { FileLocation(name: name, in: parent, path: path) }

        /// Whether the entry is a regular file named as Sluice names its temporary files
        /// (`.sluice-<12 lowercase letters and digits>.tmp`, or `.sluice-spill-<12>.tmp` for a
        /// spill file): one a crash or a `SIGKILL` left behind, or
        /// one a run still under way owns. A tree copy never copies it, and nothing removes it
        /// automatically.
        package var isSluiceTemporaryFile: Bool { status.kind == .regular && Descriptor.isTemporaryName(name.bytes) }
    }

    /// One step of the walk, in order: a directory's ``enterDirectory(_:_:)``, then its entries,
    /// then its ``leaveDirectory(_:)``.
    package enum Event: Sendable {
        /// Anything but a directory: a regular file, a symbolic link, a FIFO, a device, a socket.
        case file(Entry)
        /// A directory, opened; its entries follow. The handle is open for as long as the
        /// caller keeps it.
        case enterDirectory(Entry, DirectoryHandle)
        /// The end of a directory's entries (also of one whose entries were skipped).
        case leaveDirectory(Entry)
        /// A directory whose entries cannot be read (`open(2)` or `getdents64(2)` refused with
        /// `EACCES`: a directory its user may not read), with that error: a copy makes it, empty,
        /// and reports the error, as `cp -r` does. No `leaveDirectory` follows it.
        case unreadableDirectory(Entry, FileError)
        /// An entry that could not be read (permission denied, vanished since its directory
        /// was listed, a directory replaced during the walk), or a directory not entered (a
        /// cycle, a directory refused), with its path and errno; the walk goes on with the
        /// next one.
        case failure(FileError)
    }
}
