extension FollowedFile {
    /// One file that a followed name has stood for: its device and inode (`st_dev`, `st_ino`)
    /// and its birth time (`statx(2)`'s `stx_btime`; where the file system keeps none, the
    /// change time when the follower first saw it), so an inode reused by a later file is
    /// another generation.
    public struct Identity: Sendable, Hashable, CustomStringConvertible {
        /// The device the file is on (`st_dev`).
        public var device: UInt64
        /// The file's inode number (`st_ino`).
        public var inode: UInt64
        /// The birth time's seconds since the Unix epoch.
        public var birthSeconds: Int64
        /// The birth time's nanoseconds within its second (0..<1,000,000,000).
        public var birthNanoseconds: Int64
        /// Whether ``birthSeconds`` is a change time (no birth time on this file system).
        public var birthIsChangeTime: Bool

        /// `device:inode@seconds.nanoseconds`, for messages.
        public var description: String { "\(device):\(inode)@\(birthSeconds).\(birthNanoseconds)" }

        /// Whether this file was born before `other` (by birth time, then inode).
        func isBorn(before other: Identity) -> Bool {
            (birthSeconds, birthNanoseconds, inode) < (other.birthSeconds, other.birthNanoseconds, other.inode)
        }
    }

    /// Where a chunk was read: the generation and the offset, in bytes from its start.
    public struct Position: Sendable, Hashable {
        /// The generation the bytes were read from.
        public var generation: Identity
        /// Where in it, in bytes from its start.
        public var offset: Int64
    }

    /// Why bytes were lost.
    public enum LossReason: Sendable, Hashable {
        /// The file was truncated (copytruncate) before they were read, and no copy beside it
        /// held them.
        case truncated
        /// More generations were queued than ``Options/maximumQueuedGenerations``: the oldest
        /// unread was let go.
        case tooManyGenerations
        /// A copytruncate while the follower was behind the copy's end (not running, stopped,
        /// or slower than the writer): what was written between the copy and the truncation is
        /// in neither file, and no one can count it; reported with 0 bytes, counted in
        /// ``Statistics/uncountedLosses``.
        case truncatedWhileBehind
        /// A file came to the name and was gone (deleted, or renamed where it cannot be told
        /// from others) before it could be opened; reported with 0 bytes, counted in
        /// ``Statistics/uncountedLosses``.
        case goneBeforeOpened
        /// A file a checkpoint named for reading was not found again on resume (deleted, or
        /// compressed by a rotation, while no follower ran): reported with the bytes it was seen
        /// to hold past the offset reached, a lower bound, and counted in
        /// ``Statistics/uncountedLosses`` (what was appended after cannot be known).
        case goneWhileStopped
    }

    /// What happened to a followed file, for a message (``description``) or a count.
    public enum Event: Sendable, Hashable, CustomStringConvertible {
        /// The name does not exist (yet): waiting for it to be created.
        case waitingForFile(Pathname)
        /// A file is at the name again (after it did not exist).
        case appeared(Pathname)
        /// The name was removed or renamed away; the file it stood for is read to its end.
        case nameRemoved(Pathname)
        /// What is at the name is not a regular file (a directory, a FIFO, a device): not read.
        case notRegular(Pathname, kind: String)
        /// The next generation at the name is now read: the previous one was read to its end
        /// and settled.
        case rotated(Pathname, to: Identity)
        /// A copytruncate was seen; `recovered` bytes were read from `copy` (nil: none found).
        case truncated(copy: Pathname?, recovered: Int64)
        /// Bytes that existed were not read and never will be; `bytes` is a lower bound.
        case lost(bytes: Int64, reason: LossReason)
        /// Bytes appended to a generation after it was left, shipped out of order.
        case late(bytes: Int64, generation: Identity)
        /// inotify could not be had (or a watch of a file); the name and the files are looked at
        /// every `interval`.
        case polling(every: Duration)
        /// The file at the name could not be opened (permissions, a socket): not read; the next
        /// file at the name will be.
        case cannotOpen(Pathname, reason: String)
        /// The directory was removed or renamed: no new file at the name will be seen.
        case directoryGone(Pathname)

        /// The event in words, for a message (without a program's prefix).
        public var description: String {
            switch self {
            case .waitingForFile(let path): "'\(path)' does not exist; waiting for it to be created"
            case .appeared(let path): "'\(path)' appeared; following it"
            case .nameRemoved(let path): "'\(path)' was removed or renamed; reading the file it named to its end"
            case .notRegular(let path, let kind): "'\(path)' is now \(kind), not a regular file; waiting for a regular file"
            case .rotated(let path, _): "'\(path)' was rotated: reading the next file at its name"
            case .truncated(let copy?, let recovered):
                "the file was truncated; \(recovered) bytes not yet read were recovered from its copy '\(copy)'"
            case .truncated(nil, _): "the file was truncated; no copy of the bytes not yet read was found"
            case .lost(let bytes, .truncated): "lost at least \(bytes) bytes: truncated before they were read"
            case .lost(let bytes, .tooManyGenerations):
                "lost at least \(bytes) bytes: too many rotations behind, the oldest unread file was let go"
            case .lost(_, .goneBeforeOpened):
                "a file came to the name and was gone before it could be opened: its bytes cannot be counted"
            case .lost(let bytes, .goneWhileStopped):
                "a file to read on from was gone when following resumed (deleted or compressed meanwhile): lost at least "
                    + "\(bytes) bytes, and what was appended to it after cannot be counted"
            case .lost(_, .truncatedWhileBehind):
                "the file was copied and truncated while this follower was behind: anything written between the copy "
                    + "and the truncation is in neither file, and cannot be counted"
            case .late(let bytes, let generation):
                "\(bytes) bytes were appended to an older file (\(generation)) after it was left; shipped out of order"
            case .polling(let interval): "inotify is not available; looking at the file every \(interval)"
            case .cannotOpen(let path, let reason): "cannot open the file now at '\(path)' (\(reason)); waiting for the next one"
            case .directoryGone(let path): "the directory '\(path)' was removed or renamed: no new file will be seen in it"
            }
        }
    }

    /// The counts of a followed file, as ``FollowedFile/statistics`` gives them.
    public struct Statistics: Sendable, Hashable {
        /// Bytes read and handed to the consumer.
        public var bytesRead: Int64 = 0
        /// Bytes that exist and are not read yet: the current generation's and the queued ones'.
        public var lagBytes: Int64 = 0
        /// Generations moved on from (renames, re-creations, copytruncates).
        public var rotations: Int = 0
        /// Bytes reported lost (``Event/lost(bytes:reason:)``), a lower bound.
        public var lostBytes: Int64 = 0
        /// Bytes shipped out of order (``FollowedChunk/isLate``).
        public var lateBytes: Int64 = 0
        /// Copytruncates seen while behind, whose losses cannot be counted
        /// (``LossReason/truncatedWhileBehind``).
        public var uncountedLosses: Int = 0

        /// Counts of zero (the follower's own start; a user reads them from ``FollowedFile/statistics``).
        package init() {}
    }
}
