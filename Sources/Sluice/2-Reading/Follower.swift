#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The state behind a ``FollowedFile``: the generations of the name, read on a dedicated
/// thread.
///
/// An actor whose executor is a ``BlockingIOExecutor``: every `openat(2)`, `fstat(2)`,
/// `pread(2)` and wait in `poll(2)` runs off the cooperative pool. One loop, ``next()``: take the
/// directory's events (a new file at the name is opened and queued at once), read the current
/// generation from its position, else late bytes of a generation left, else move on to the next
/// generation once the current one has settled, else wait for inotify, the time of the next
/// deadline, or cancellation.
actor Follower {
    nonisolated let executor = BlockingIOExecutor(label: "sluice.follow")
    nonisolated let path: Pathname
    nonisolated let name: Pathname
    nonisolated let options: FollowedFile.Options
    nonisolated let report: @Sendable (FollowedFile.Event) -> Void
    /// Ends a wait on cancellation (``FollowedFile/AsyncIterator``'s handler signals it).
    nonisolated let wake: WakePipe
    /// Set by ``FollowedFile/stop()``: the sequence ends.
    nonisolated let stopping = LockedValue(false)
    /// The counts, published after every step for ``FollowedFile/statistics``.
    nonisolated let published = LockedValue(FollowedFile.Statistics())
    /// Runs after every read of data and before the next `fstat(2)`, for tests that rotate or
    /// truncate the file exactly there.
    nonisolated let afterRead = LockedValue<(@Sendable () -> Void)?>(nil)

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    var directory: DirectoryHandle?
    var inotify: Inotify?
    var directoryWatch: CInt = -1
    var current: Generation?
    /// Opened at the name after the current one, oldest first.
    var queue: [Generation] = []
    /// Left for a newer one, still watched for late bytes (a writer that never reopens keeps
    /// writing to the file renamed away): the newest ``maximumRetired``.
    var retired: [Generation] = []
    var statistics = FollowedFile.Statistics()
    /// When bytes were last appended or read, or a generation came: what the idle time counts from.
    var lastActivity = ContinuousClock.now
    /// Whether a state worth one message was said (waiting for the file, not a regular file).
    var saidWaiting = false
    var saidNotRegular = false
    /// Whether the name or a file is looked at every ``FollowedFile/Options/pollingInterval``:
    /// no inotify, or a file whose own watch could not be had (said once).
    var polls = false
    /// The copytruncates' copies read, by device and inode (the newest 64): never taken for a
    /// file that came to the name (``findMissed(among:)``), whose bytes they hold again.
    var copiesRead: [FileIdentity] = []
    /// Identities (device and inode) of the files not to take for a generation or a copy: the
    /// destination the chunks are written to (``FollowedFile/exclude(_:)``).
    nonisolated let excluded: LockedValue<Set<FileIdentity>>
    /// The checkpoint of the last chunk acknowledged (``FollowedFile/acknowledge(_:)``).
    nonisolated let acknowledged = LockedValue(FollowedFile.Checkpoint(reading: [], retired: []))

    /// How many generations left are watched for late bytes (each holds a descriptor, and the
    /// space of a deleted file).
    static let maximumRetired = 4

    /// - Throws: ``FileError`` (`pipe2`) when no descriptor is left.
    init(path: Pathname, options: FollowedFile.Options, report: @escaping @Sendable (FollowedFile.Event) -> Void) throws(FileError) {
        self.path = path
        name = path.lastComponent
        self.options = options
        self.report = report
        excluded = LockedValue(options.excluded)
        wake = try WakePipe()
    }

    /// Opens the directory and watches it, then the file if it exists, or the files
    /// `checkpoint` names (``resume(from:)``).
    ///
    /// - Throws: ``FileError``: the directory; a directory or a non-regular file at the name.
    func start(resumingFrom checkpoint: FollowedFile.Checkpoint?) throws(FileError) {
        let directory = try DirectoryHandle.open(path.directory)
        self.directory = directory
        do throws(FileError) {
            guard !options.avoidsInotify else { throw FileError(.inotifyInit, path: nil, errno: ErrorNumber.notSupported) }
            let inotify = try Inotify()
            directoryWatch = try inotify.watch(
                path.directory,
                mask: UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR))
            self.inotify = inotify
        } catch where error.code == .notFound || error.code == .isDirectory {
            throw error
        } catch {
            startPolling()
        }
        defer { acknowledged.withLock { $0 = self.checkpoint } }
        if let checkpoint, !checkpoint.reading.isEmpty {
            try resume(from: checkpoint)
            publish()
            return
        }
        let (generation, kind) = try Generation.open(name, in: directory)
        if let kind, kind != .regular {
            throw kind == .directory
                ? FileError.isDirectory(.read, path: path)
                : FileError.notRegular(path, reason: "sluice follows regular files")
        }
        if let generation {
            if options.startsAtEnd && checkpoint == nil { generation.position = generation.knownSize }
            watch(generation)
            current = generation
        } else {
            saidWaiting = true
            report(.waitingForFile(path))
        }
        publish()
    }

    /// The next chunk; ``FollowedFile/Delivery/caughtUp`` when there is nothing to read at
    /// `caughtUpDeadline` (`nil`: never); `nil` once idle for ``FollowedFile/Options/idleTimeout``.
    func next(caughtUpDeadline: ContinuousClock.Instant? = nil) throws -> FollowedFile.Delivery? {
        while true {
            if Task.isCancelled { throw CancellationError() }
            if stopping.withLock({ $0 }) { return nil }
            takeEvents()
            if let chunk = try readCurrent() ?? readRetired() {
                publish()
                return .chunk(chunk)
            }
            if try moveOn() { continue }
            publish()
            let now = ContinuousClock.now
            let idleEnd = options.idleTimeout.map { lastActivity + $0 }
            if let idleEnd, queue.isEmpty, now >= idleEnd {
                // Idle only if a last look finds nothing new (the consumer may have been away).
                guard polls, case .queued = lookAndQueue() else { return nil }
                continue
            }
            if let caughtUpDeadline, now >= caughtUpDeadline { return .caughtUp }
            try wait(until: [nextDeadline(idleEnd: idleEnd), caughtUpDeadline].compactMap { $0 }.min())
        }
    }

    /// Where the follower stands: the generations to read and those left.
    var checkpoint: FollowedFile.Checkpoint {
        .init(reading: ([current].compactMap { $0 } + queue).map(\.mark), retired: retired.map(\.mark))
    }

    /// Waits for inotify, a signal (cancellation), or `deadline`.
    private func wait(until deadline: ContinuousClock.Instant?) throws {
        let timeout = deadline.map { max(.zero, $0 - .now) }
        let outcome: WakePipe.WaitOutcome
        do { outcome = try wake.wait(for: inotify?.descriptor.rawValue, timeout: timeout) } catch {
            throw FileError.read(path: path, errno: error)
        }
        if outcome == .signalled && Task.isCancelled { throw CancellationError() }
        if polls { _ = lookAndQueue() }
    }

    /// The earliest time something is due: the idle end, the current generation settled (when
    /// one is queued), the next look without inotify.
    private func nextDeadline(idleEnd: ContinuousClock.Instant?) -> ContinuousClock.Instant? {
        var deadlines: [ContinuousClock.Instant] = []
        if let idleEnd { deadlines.append(idleEnd) }
        if let current, !queue.isEmpty { deadlines.append(current.lastGrowth + options.settleTime) }
        if polls { deadlines.append(.now + options.pollingInterval) }
        return deadlines.min()
    }

    /// Moves on to the next generation once the current one has settled; whether it did.
    private func moveOn() throws -> Bool {
        let now = ContinuousClock.now
        guard !queue.isEmpty else { return false }
        if let current {
            guard current.isComplete || now - current.lastGrowth >= options.settleTime else { return false }
            // A copytruncate's copy too: a checkpoint then still names it, and a resumed follower
            // never takes it for a file born since.
            retired.append(current)
            // The oldest left is let go once it has nothing unread (else it is read first).
            if retired.count > Self.maximumRetired, let oldest = retired.first, (try? oldest.descriptor.status().size) ?? 0 <= oldest.position {
                release(retired.removeFirst())
            }
        }
        let next = queue.removeFirst()
        if current == nil {
            if saidWaiting { report(.appeared(path)) }
        } else if !(current!.isComplete) {
            statistics.rotations += 1
            report(.rotated(path, to: next.identity))
        }
        saidWaiting = false
        current = next
        lastActivity = now
        return true
    }

    func release(_ generation: Generation) {
        if let watch = generation.watch { inotify?.removeWatch(watch) }
    }

    /// Publishes the counts, the lag included: the current generation's size as its last
    /// `fstat(2)` in this step saw it, the others' as they are now (one `fstat(2)` each).
    func publish() {
        var counts = statistics
        let others = (queue + retired).reduce(Int64(0)) { lag, generation in
            lag + max(0, ((try? generation.descriptor.status().size) ?? generation.knownSize) - generation.position)
        }
        counts.lagBytes = others + (current.map { max(0, $0.knownSize - $0.position) } ?? 0)
        published.withLock { $0 = counts }
    }
}
