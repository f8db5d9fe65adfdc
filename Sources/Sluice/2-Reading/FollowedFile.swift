/// A file that is still being written, read as an asynchronous sequence of chunks as
/// `tail -F` reads it: from its first byte (or its end), then what is appended, through every
/// rotation of its name, until the consumer stops pulling or the file has been idle for
/// ``Options/idleTimeout``.
///
/// Pull-based, as ``FileChunks``: a chunk is read only when the consumer asks for it, so a slow
/// consumer simply falls behind (the file on disk waits) and memory holds the chunk in hand.
/// Each chunk comes with its ``Position``: which generation of the file it was read from and
/// at what offset.
///
/// A generation is one file that the name has stood for, known by its device, inode and birth
/// time (`statx(2)`; the change time at first sight where the file system keeps none), and by
/// a fingerprint of its first bytes, so a reused inode is a new file and two files with the same
/// first line are not one. What is guaranteed for each way of rotating a log (the article
/// "Following live files"):
/// - **Rename and create, shifts, delete and re-create**: a new file at the name is opened at
///   once (inotify(7) on the directory) and queued, in order, at most
///   ``Options/maximumQueuedGenerations``; past that the oldest unread is reported lost
///   (``Event/lost(bytes:reason:)``). The current generation is read to its end through its
///   own descriptor and held until nothing has been appended to it for ``Options/settleTime``,
///   then the next is read. Bytes appended to an old generation afterwards (by a writer that
///   never reopens, or late) are read, marked ``FollowedChunk/isLate`` (out of order): the four
///   newest generations left stay open and watched for them.
/// - **Copytruncate** (the size falls below the position, or the first bytes no longer match
///   on the same inode): the bytes from the position to the end of the copy are read from the
///   copy (the file beside it, named after it, whose first bytes and 4 KiB before the position match),
///   then the file from offset 0. Bytes that were in neither are reported
///   (``Event/lost(bytes:reason:)``, a lower bound; a follower that was behind the copy's end
///   cannot count them, and says so: ``LossReason/truncatedWhileBehind``).
/// - A name that does not exist yet is waited for; one that becomes a directory, a FIFO or a
///   device is not read (``Event/notRegular(_:kind:)``) until a regular file is there again.
///
/// Wake-ups come from inotify (the file and its directory), so an idle file costs nothing;
/// where inotify cannot be had, the name is looked at every ``Options/pollingInterval``
/// (``Event/polling(every:)``, once).
///
/// ```swift
/// let log = try await FollowedFile.open("/var/log/app.log", options: .init(idleTimeout: .seconds(2)))
/// for try await piece in log {
///     try await sink.write(piece.chunk)
/// }
/// ```
///
/// Concurrency contract: single-pass, one consumer. Every system call runs on a dedicated
/// thread of the sequence's own, never on the cooperative pool; a wait for the file to change is
/// ended by task cancellation (the iterator throws `CancellationError`). ``statistics`` and the
/// event handler may be used from any thread.
public struct FollowedFile: AsyncSequence, Sendable {
    /// A chunk and where it was read.
    public typealias Element = FollowedChunk

    /// How a file is followed.
    public struct Options: Sendable, Hashable {
        /// The largest chunk, in bytes (default 128 KiB, ``defaultChunkSize``).
        public var chunkSize: Int
        /// Whether reading starts at the end the file has when it is first opened (`tail -F`'s
        /// default; `sluice follow --from-end`), rather than at its first byte.
        public var startsAtEnd: Bool
        /// How long a generation is held after its last append once a newer one is queued, for a
        /// writer that opened it before the rotation (default 250 ms).
        public var settleTime: Duration
        /// Ends the sequence once nothing has been appended for this long and nothing is queued;
        /// `nil` (the default): never.
        public var idleTimeout: Duration?
        /// The most generations held open and unread behind the current one (default 16).
        public var maximumQueuedGenerations: Int
        /// How often the name is looked at where inotify cannot be had (default 1 s).
        public var pollingInterval: Duration
        /// Looks every ``pollingInterval`` as where inotify cannot be had (for tests).
        package var avoidsInotify = false
        /// Files never taken for a generation or a copy (device and inode): the destination the
        /// chunks are written to and the state beside it, when they are beside the followed file.
        package var excluded: Set<FileIdentity> = []

        /// Options with the defaults above, changed by the arguments given.
        ///
        /// - Precondition: `chunkSize` and `maximumQueuedGenerations` are at least 1.
        public init(
            chunkSize: Int = FollowedFile.defaultChunkSize, startsAtEnd: Bool = false, settleTime: Duration = .milliseconds(250),
            idleTimeout: Duration? = nil, maximumQueuedGenerations: Int = 16, pollingInterval: Duration = .seconds(1)
        ) {
            precondition(chunkSize > 0 && maximumQueuedGenerations > 0, "chunkSize and maximumQueuedGenerations must be positive")
            self.chunkSize = chunkSize
            self.startsAtEnd = startsAtEnd
            self.settleTime = settleTime
            self.idleTimeout = idleTimeout
            self.maximumQueuedGenerations = maximumQueuedGenerations
            self.pollingInterval = pollingInterval
        }
    }

    /// The default chunk size: 128 KiB, as `cat`'s buffer. A backlog shipped to a file in
    /// chunks of 1 MiB took 1.0 to 3 times as long as `cat` from run to run (the copies into
    /// the page cache slowed); in chunks of 128 KiB, 1.1 times, every run
    /// (`benchmarks/follow-live.py SLUICE catchup`).
    public static let defaultChunkSize = 128 << 10

    let follower: Follower

    /// Starts following `path`: watches its directory, and opens the file if it exists; or,
    /// from `checkpoint`, takes up where a follower stood.
    ///
    /// Resuming from a checkpoint, each generation it names is found again by its device,
    /// inode and birth time among the files in the directory that a rotation names after the
    /// followed one (`app.log.1`, `app.log-20261207`; not `app.log.2.gz`, compressed by the
    /// rotation, nor `app.log.bak`), and read on from its offset. One that is no longer there (deleted or compressed while no follower ran) is
    /// reported lost (``LossReason/goneWhileStopped``) with the bytes it was seen to hold past
    /// its offset. When the last file to read is no longer the one at the name (it was renamed
    /// away), the files with rotation names that were born after it are read too, in order of
    /// birth, then the file at the name (without birth times, only the file at the name, the
    /// gap reported). A file truncated meanwhile (shorter than the
    /// offset, or other bytes before it or at its start) is recovered as a copytruncate.
    /// ``Options/startsAtEnd`` applies only without a checkpoint.
    ///
    /// - Parameters:
    ///   - path: the file's name; a name that does not exist yet is waited for.
    ///   - checkpoint: where a follower of the same name stood (``checkpoint``); `nil`: start afresh.
    ///   - options: how to follow it.
    ///   - onEvent: called for every rotation, loss and condition worth a message, in order, on
    ///     the sequence's thread (keep it short: it runs between reads).
    /// - Throws: ``FileError``: the directory cannot be opened (code `notFound`, ...); the file
    ///   is a directory (`isDirectory`) or not a regular file (`unsupported`); a call failed.
    public static func open(
        _ path: Pathname, resumingFrom checkpoint: Checkpoint? = nil, options: Options = Options(),
        onEvent: @escaping @Sendable (Event) -> Void = { _ in }
    ) async throws(FileError) -> FollowedFile {
        let follower = try Follower(path: path, options: options, report: onEvent)
        try await follower.start(resumingFrom: checkpoint)
        return FollowedFile(follower: follower)
    }

    /// Acknowledges every chunk up to `piece`: its bytes are durable where the consumer put
    /// them. ``checkpoint`` becomes the checkpoint just after it (set, not advanced: a chunk
    /// older than the last acknowledged moves it back). Any thread.
    public func acknowledge(_ piece: FollowedChunk) {
        follower.acknowledged.withLock { $0 = piece.checkpoint }
    }

    /// The checkpoint of the last chunk acknowledged (``acknowledge(_:)``); before any, where
    /// the follower started (resumed, or opened: at the first byte, or at the end with
    /// ``Options/startsAtEnd``). What to store, to resume from. Any thread.
    public var checkpoint: Checkpoint { follower.acknowledged.withLock { $0 } }

    /// The executor the reads run on: a consumer that pulls in a loop runs best on it (each
    /// `next()` then reads on the thread it is already on).
    package var preferredExecutor: BlockingIOExecutor { follower.executor }

    /// Never takes the file of `identity` for a generation or a copytruncate's copy: the
    /// destination the chunks are written to, when it is beside the followed file.
    package func exclude(_ identity: FileIdentity) {
        follower.excluded.withLock { _ = $0.insert(identity) }
    }

    /// Ends the sequence: the next ``AsyncIterator/next()`` (or the one waiting) returns `nil`,
    /// as at the idle end, so a consumer that is not cancelled finishes as it does then (the
    /// command's signal handling: a last durable point before it exits). Any thread.
    package func stop() {
        follower.stopping.withLock { $0 = true }
        follower.wake.signal()
    }

    /// The counts so far: bytes read, the lag, rotations, losses. Any thread.
    public var statistics: Statistics { follower.published.withLock { $0 } }

    /// The chunks alone, in order, for a ``Pipeline`` (whose source is a sequence of ``Chunk``):
    /// `Pipeline(from: followed.chunks, to: sink, totalBytes: nil, transform: …)`.
    public var chunks: AsyncMapSequence<FollowedFile, Chunk> {
        map { @Sendable piece in piece.chunk }
    }

    /// The iterator; the sequence is single-pass, so a second one continues where the first stopped.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(follower: follower)
    }

    /// Reads the chunks in order. Not `Sendable`.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let follower: Follower

        /// The next chunk, waiting for the file to grow or a new generation to come; `nil` once
        /// ``Options/idleTimeout`` has passed with nothing new.
        ///
        /// - Throws: ``FileError`` (a read, `fstat`, inotify); `CancellationError` once the task
        ///   is cancelled (the chunks returned before were all there was to give).
        public mutating func next() async throws -> FollowedChunk? {
            guard case .chunk(let piece) = try await next(caughtUpDeadline: nil) else { return nil }
            return piece
        }

        /// The next chunk as ``next()`` gives it, or ``Delivery/caughtUp`` once there is nothing
        /// to read and `limit` has passed since the call: the moment for a consumer to make what
        /// it wrote durable and acknowledge it, rather than wait with it undone; `nil` at the end.
        ///
        /// - Throws: as ``next()``.
        public mutating func next(caughtUpAfter limit: Duration) async throws -> Delivery? {
            try await next(caughtUpDeadline: .now + limit)
        }

        private func next(caughtUpDeadline: ContinuousClock.Instant?) async throws -> Delivery? {
            let follower = self.follower
            return try await withTaskCancellationHandler {
                try await follower.next(caughtUpDeadline: caughtUpDeadline)
            } onCancel: {
                follower.wake.signal()
            }
        }
    }
}

/// A chunk of a followed file, with where it was read.
public struct FollowedChunk: Sendable {
    /// The bytes.
    public var chunk: Chunk
    /// The generation and offset of the chunk's first byte.
    public var position: FollowedFile.Position
    /// Whether the bytes were appended to a generation after the follower had moved on to a
    /// newer one: shipped out of order rather than dropped.
    public var isLate: Bool
    /// Where the follower stands just after this chunk: what ``FollowedFile/acknowledge(_:)``
    /// records once the chunk is durable.
    public var checkpoint: FollowedFile.Checkpoint
}

extension FollowedFile {
    /// What ``AsyncIterator/next(caughtUpAfter:)`` found.
    public enum Delivery: Sendable {
        /// A chunk, as ``AsyncIterator/next()`` returns it.
        case chunk(FollowedChunk)
        /// Nothing to read, for the time given.
        case caughtUp
    }
}
