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
    var started = false

    /// How many generations left are watched for late bytes (each holds a descriptor, and the
    /// space of a deleted file).
    static let maximumRetired = 4

    init(path: Pathname, options: FollowedFile.Options, report: @escaping @Sendable (FollowedFile.Event) -> Void) {
        self.path = path
        name = path.lastComponent
        self.options = options
        self.report = report
        wake = try! WakePipe()  // two descriptors: EMFILE here is also EMFILE for the file itself
    }

    /// Opens the directory and watches it, then the file if it exists.
    ///
    /// - Throws: ``FileError``: the directory; a directory or a non-regular file at the name.
    func start() throws(FileError) {
        let directory = try DirectoryHandle.open(path.directory)
        self.directory = directory
        do {
            let inotify = try Inotify()
            directoryWatch = try inotify.watch(
                path.directory, mask: UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_ONLYDIR))
            self.inotify = inotify
        } catch where error.code == .notFound || error.code == .isDirectory {
            throw error
        } catch {
            report(.polling(every: options.pollingInterval))
        }
        let (generation, kind) = try Generation.open(name, in: directory)
        if let kind, kind != .regular {
            throw kind == .directory
                ? FileError.isDirectory(.read, path: path)
                : FileError.notRegular(path, reason: "sluice follows regular files")
        }
        if let generation {
            if options.startsAtEnd { generation.position = generation.knownSize }
            watch(generation)
            current = generation
        } else {
            saidWaiting = true
            report(.waitingForFile(path))
        }
        started = true
        publish()
    }

    /// The next chunk; `nil` once idle for ``FollowedFile/Options/idleTimeout``.
    func next() throws -> FollowedChunk? {
        while true {
            if Task.isCancelled { throw CancellationError() }
            try takeEvents()
            if let chunk = try readCurrent() ?? readRetired() {
                publish()
                return chunk
            }
            if try moveOn() { continue }
            publish()
            let now = ContinuousClock.now
            let idleEnd = options.idleTimeout.map { lastActivity + $0 }
            if let idleEnd, queue.isEmpty, now >= idleEnd { return nil }
            try wait(until: nextDeadline(idleEnd: idleEnd))
        }
    }

    /// Waits for inotify, a signal (cancellation), or `deadline`.
    private func wait(until deadline: ContinuousClock.Instant?) throws {
        let timeout = deadline.map { max(.zero, $0 - .now) }
        let outcome: WakePipe.WaitOutcome
        do { outcome = try wake.wait(for: inotify?.descriptor.rawValue, timeout: timeout) } catch {
            throw FileError.read(path: path, errno: error)
        }
        if outcome == .signalled && Task.isCancelled { throw CancellationError() }
        if inotify == nil { try look() }
    }

    /// The earliest time something is due: the idle end, the current generation settled (when
    /// one is queued), the next look without inotify.
    private func nextDeadline(idleEnd: ContinuousClock.Instant?) -> ContinuousClock.Instant? {
        var deadlines: [ContinuousClock.Instant] = []
        if let idleEnd { deadlines.append(idleEnd) }
        if let current, !queue.isEmpty { deadlines.append(current.lastGrowth + options.settleTime) }
        if inotify == nil { deadlines.append(.now + options.pollingInterval) }
        return deadlines.min()
    }

    /// The directory's events: a file created or renamed to the name is opened at once. When
    /// more files came to the name than were found there (each renamed on before it could be
    /// opened), the missed ones are looked for beside it (``findMissed(before:)``).
    private func takeEvents() throws {
        guard let inotify else { return }
        var (appeared, found) = (0, 0)
        for event in inotify.readEvents() {
            if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                appeared += 2
                found += try look() ? 1 : 0
            } else if event.watch == directoryWatch && event.name == name.bytes {
                if event.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
                    appeared += 1
                    found += try look() ? 1 : 0
                }
                if event.mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 { report(.nameRemoved(path)) }
            }
        }
        if appeared > found { try findMissed() }
    }

    /// Looks at the name: a regular file not seen yet is opened and queued; whether one was.
    @discardableResult
    func look() throws -> Bool {
        guard let directory else { return false }
        let (found, kind) = try Generation.open(name, in: directory)
        guard let generation = found else {
            if let kind, !saidNotRegular {
                saidNotRegular = true
                report(.notRegular(path, kind: kind == .directory ? "a directory" : kind == .fifo ? "a FIFO" : "a special file"))
            }
            return false
        }
        saidNotRegular = false
        if known.contains(generation.identity) { return false }
        enqueue(generation)
        return true
    }

    /// Every generation held: current, queued, left.
    var known: [FollowedFile.Identity] { ([current] + queue + retired).compactMap { $0?.identity } }

    /// Queues `generation` in birth order (a missed one goes before those that came after it);
    /// past the limit, the oldest unread is let go and reported.
    func enqueue(_ generation: Generation) {
        watch(generation)
        if queue.count == options.maximumQueuedGenerations {
            let dropped = queue.removeFirst()
            lose(dropped.knownSize - dropped.position, .tooManyGenerations)
        }
        let index = queue.lastIndex { $0.identity.isBorn(before: generation.identity) }.map { $0 + 1 } ?? 0
        queue.insert(generation, at: index)
        lastActivity = .now
    }

    /// The files that stood at the name between two looks and were renamed on before they could
    /// be opened (a shift, twice in a row): regular files beside it whose names begin with its
    /// name, not held, born after every generation held but the newest queued, and before it.
    func findMissed() throws {
        guard let directory, let newest = queue.last?.identity else { return }
        let older = known.filter { $0 != newest }
        for candidate in (try? directory.entryNames()) ?? [] where candidate != name && candidate.bytes.starts(with: name.bytes) {
            guard let generation = try? Generation.open(candidate, in: directory).0,
                !known.contains(generation.identity), generation.identity.isBorn(before: newest),
                older.allSatisfy({ $0.isBorn(before: generation.identity) })
            else { continue }
            enqueue(generation)
        }
    }

    func watch(_ generation: Generation) {
        generation.watch = try? inotify?.watch(
            Pathname("/proc/self/fd/\(generation.descriptor.rawValue)"), mask: UInt32(IN_MODIFY | IN_ATTRIB))
    }

    func lose(_ bytes: Int64, _ reason: FollowedFile.LossReason) {
        guard bytes > 0 else { return }
        statistics.lostBytes += bytes
        report(.lost(bytes: bytes, reason: reason))
    }

    /// Moves on to the next generation once the current one has settled; whether it did.
    private func moveOn() throws -> Bool {
        let now = ContinuousClock.now
        guard !queue.isEmpty else { return false }
        if let current {
            guard current.isComplete || now - current.lastGrowth >= options.settleTime else { return false }
            if current.isComplete { release(current) } else { retired.append(current) }
            if retired.count > Self.maximumRetired { release(retired.removeFirst()) }
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

    /// Publishes the counts, the lag included.
    func publish() {
        var counts = statistics
        counts.lagBytes = ([current].compactMap { $0 } + queue).reduce(0) { $0 + max(0, $1.knownSize - $1.position) }
        published.withLock { $0 = counts }
    }
}
