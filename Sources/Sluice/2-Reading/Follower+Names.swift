#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Follower {
    /// What a look at the name found.
    enum Look {
        /// A file not held before: queued.
        case queued(FileIdentity)
        /// A file already held.
        case held(FileIdentity)
        /// Nothing to take: no file, not a regular file, or one that cannot be opened (said).
        case nothing
    }

    /// The directory's events. A file created or renamed to the name is opened at once. When
    /// more files came to the name than were found there (each renamed on before it could be
    /// opened: two shifts between looks), the missed ones are looked for among the names files
    /// were renamed to in the same events, then among every file a rotation names after it
    /// (``findMissed(among:)``); one that is nowhere (created and deleted before it could be
    /// opened) is reported as a loss no one can count.
    func takeEvents() {
        guard let inotify else { return }
        var (appeared, found) = (0, 0)
        var queuedNow: Set<FileIdentity> = []
        var renamedTo: [Pathname] = []
        for event in inotify.readEvents() {
            let overflow = event.mask & UInt32(IN_Q_OVERFLOW) != 0
            if event.watch == directoryWatch && event.mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                report(.directoryGone(path.directory))
            }
            guard overflow || event.watch == directoryWatch else { continue }
            if event.mask & UInt32(IN_MOVED_TO) != 0 && event.name != name.bytes { renamedTo.append(Pathname(bytes: event.name)) }
            guard overflow || event.name == name.bytes else { continue }
            if overflow || event.mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
                appeared += 1
                switch lookAndQueue() {
                case .queued(let identity):
                    found += 1
                    queuedNow.insert(identity)
                case .held(let identity) where !queuedNow.contains(identity): found += 1  // the one this event made
                case .held, .nothing: break
                }
            }
            if event.mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 { report(.nameRemoved(path)) }
        }
        guard appeared > found else { return }
        var missing = appeared - found - findMissed(among: renamedTo)
        // Renamed on again before these events were read (the follower was away): among every
        // file named after the followed one.
        if missing > 0 { missing -= findMissed(among: (try? rotationNames()) ?? []) }
        if missing > 0 {
            statistics.uncountedLosses += missing
            report(.lost(bytes: 0, reason: .goneBeforeOpened))
        }
    }

    /// Looks at the name: a regular file not held yet is opened and queued.
    @discardableResult
    func lookAndQueue() -> Look {
        guard let directory else { return .nothing }
        let found: Generation?
        let kind: FileStatus.Kind?
        do { (found, kind) = try Generation.open(name, in: directory) } catch {
            report(.cannotOpen(path, reason: error.description))
            return .nothing
        }
        guard let generation = found else {
            if let kind, !saidNotRegular {
                saidNotRegular = true
                report(.notRegular(path, kind: kind == .directory ? "a directory" : kind == .fifo ? "a FIFO" : "a special file"))
            }
            return .nothing
        }
        saidNotRegular = false
        let identity = generation.fileIdentity
        if held.contains(identity) || excluded.withLock({ $0.contains(identity) }) { return .held(identity) }
        enqueue(generation)
        return .queued(identity)
    }

    /// The files held (current, queued, left), by device and inode: a file held open cannot
    /// have its inode reused, so these two name it while it is held.
    var held: Set<FileIdentity> { Set(([current] + queue + retired).compactMap { $0?.fileIdentity }) }

    /// Queues `generation` in birth order (a missed one goes before those that came after it);
    /// past the limit, the oldest unread is let go and reported, with what it holds now.
    func enqueue(_ generation: Generation) {
        watch(generation)
        if queue.count == options.maximumQueuedGenerations {
            let dropped = queue.removeFirst()
            let size = (try? dropped.descriptor.status().size) ?? dropped.knownSize
            statistics.lostBytes += max(0, size - dropped.position)
            report(.lost(bytes: max(0, size - dropped.position), reason: .tooManyGenerations))
            release(dropped)
        }
        let index = queue.lastIndex { $0.identity.isBorn(before: generation.identity) }.map { $0 + 1 } ?? 0
        queue.insert(generation, at: index)
        lastActivity = .now
    }

    /// The files that came to the name and were renamed on before they could be opened: among
    /// `names` (those files were renamed to in the same events), regular files not held, born after
    /// every generation held but the newest queued, and before it (when one is queued: the name
    /// may be empty now). Returns how many it queued.
    func findMissed(among names: [Pathname]) -> Int {
        guard let directory else { return 0 }
        let newest = queue.last?.identity
        let older = (newest == nil ? queue : queue.dropLast()).map(\.identity) + ([current] + retired).compactMap { $0?.identity }
        var queued = 0
        for candidate in Set(names) where isRotationName(candidate) {
            guard let generation = try? Generation.open(candidate, in: directory).0,
                !held.contains(generation.fileIdentity), !excluded.withLock({ $0.contains(generation.fileIdentity) }),
                !copiesRead.contains(generation.fileIdentity),
                newest.map({ generation.identity.isBorn(before: $0) }) ?? true,
                older.allSatisfy({ $0.isBorn(before: generation.identity) })
            else { continue }
            enqueue(generation)
            queued += 1
        }
        return queued
    }

    /// Watches `generation` for appends; without a watch, the follower looks every
    /// ``FollowedFile/Options/pollingInterval``.
    func watch(_ generation: Generation) {
        guard let inotify else { return }
        do {
            generation.watch = try inotify.watch(
                Pathname("/proc/self/fd/\(generation.descriptor.rawValue)"), mask: UInt32(IN_MODIFY | IN_ATTRIB))
        } catch {
            startPolling()
        }
    }

    /// Looks every ``FollowedFile/Options/pollingInterval`` from now on, and says so once.
    func startPolling() {
        guard !polls else { return }
        polls = true
        report(.polling(every: options.pollingInterval))
    }

    func lose(_ bytes: Int64, _ reason: FollowedFile.LossReason) {
        guard bytes > 0 else { return }
        statistics.lostBytes += bytes
        report(.lost(bytes: bytes, reason: reason))
    }
}
