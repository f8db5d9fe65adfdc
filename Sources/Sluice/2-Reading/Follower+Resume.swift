extension Follower {
    /// Names of files a rotation compressed: never read as generations.
    static let compressedSuffixes = [".gz", ".bz2", ".xz", ".zst", ".lz4", ".lzma", ".Z", ".zip", ".br"]

    /// Takes up `checkpoint` (``FollowedFile/open(_:resumingFrom:options:onEvent:)`` says what
    /// is found again and how): the generations it names, at their offsets; those gone,
    /// reported lost; after a rename, the files born since, in order.
    func resume(from checkpoint: FollowedFile.Checkpoint) throws(FileError) {
        var candidates = try filesNamedAfterFollowed()
        func take(_ mark: FollowedFile.Checkpoint.Mark) -> Generation? {
            guard let index = candidates.firstIndex(where: { $0.matches(mark.identity) }) else { return nil }
            return candidates.remove(at: index)
        }
        var reading: [Generation] = []
        for mark in checkpoint.reading {
            guard let generation = take(mark) else {
                let bytes = max(0, mark.knownSize - mark.offset)
                statistics.lostBytes += bytes
                statistics.uncountedLosses += 1
                report(.lost(bytes: bytes, reason: .goneWhileStopped))
                continue
            }
            try generation.restore(mark, path: path)
            reading.append(generation)
        }
        for mark in checkpoint.retired {
            guard let generation = take(mark) else { continue }
            try generation.restore(mark, path: path)
            if generation.recordedTail == nil { retired.append(generation) }
        }
        let last = checkpoint.reading.last!.identity
        let atName = try? Generation.open(name, in: directory!).0
        if atName.map({ !$0.matches(last) }) ?? true {
            // Renamed away while no follower ran: what was born at the name since, in order.
            reading += candidates.filter { last.isBorn(before: $0.identity) }.sorted { $0.identity.isBorn(before: $1.identity) }
        }
        (retired + reading).forEach(watch)
        guard !reading.isEmpty else {
            saidWaiting = true
            report(.waitingForFile(path))
            return
        }
        // A truncation meanwhile is found by the first read (``readCurrent()``).
        current = reading.removeFirst()
        queue = reading
    }

    /// The regular files in the directory whose names start with the followed name (the name
    /// itself included), but those compressed and those excluded, opened.
    private func filesNamedAfterFollowed() throws(FileError) -> [Generation] {
        guard let directory else { return [] }
        let excluded = self.excluded.withLock { $0 }
        return try namesAfterFollowed().compactMap { candidate in
            guard let generation = try? Generation.open(candidate, in: directory).0, !excluded.contains(generation.fileIdentity)
            else { return nil }
            return generation
        }
    }

    /// The names in the directory that start with the followed name (the name itself included),
    /// but those of files a rotation compressed.
    func namesAfterFollowed() throws(FileError) -> [Pathname] {
        guard let directory else { return [] }
        return try directory.entryNames().filter { candidate in
            let text = candidate.description
            return candidate.bytes.starts(with: name.bytes) && !Self.compressedSuffixes.contains { text.hasSuffix($0) }
        }
    }
}

extension Follower.Generation {
    /// Whether this file is the generation `identity` names: the same device and inode, and the
    /// same birth time where both are birth times (a change time moves with every write).
    func matches(_ other: FollowedFile.Identity) -> Bool {
        identity.device == other.device && identity.inode == other.inode
            && (identity.birthIsChangeTime || other.birthIsChangeTime
                || (identity.birthSeconds, identity.birthNanoseconds) == (other.birthSeconds, other.birthNanoseconds))
    }

    /// Takes up where `mark` stood: its offset, the size seen, its first bytes as recorded; the
    /// bytes before the offset read back, or, where the file no longer holds them, their
    /// recorded CRC-32 (``recordedTail``: the file was truncated meanwhile).
    func restore(_ mark: FollowedFile.Checkpoint.Mark, path: Pathname) throws(FileError) {
        position = mark.offset
        knownSize = max(knownSize, mark.knownSize)
        fingerprint = mark.fingerprint
        isComplete = mark.isComplete
        let before = mark.offset >= Int64(mark.tail.length)
            ? try Self.read(descriptor, at: mark.offset - Int64(mark.tail.length), count: mark.tail.length, path: path) : []
        if before.count == mark.tail.length && CRC32(before).value == mark.tail.crc {
            tail = before
        } else {
            recordedTail = mark.tail
        }
    }
}
