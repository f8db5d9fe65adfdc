extension Follower {
    /// Takes up `checkpoint` (``FollowedFile/open(_:resumingFrom:options:onEvent:)`` says what
    /// is found again and how): the generations it names, at their offsets; those gone,
    /// reported lost; after a rename, the files born since, in order.
    func resume(from checkpoint: FollowedFile.Checkpoint) throws(FileError) {
        var candidates = try filesNamedAfterFollowed()
        func take(_ mark: FollowedFile.Checkpoint.Mark) -> Generation? {
            // A change time moves with every write: its first bytes must be the recorded ones too.
            guard
                let index = candidates.firstIndex(where: {
                    $0.matches(mark.identity) && (!mark.identity.birthIsChangeTime || $0.startsWith(mark.fingerprint, path: path))
                })
            else { return nil }
            return candidates.remove(at: index)
        }
        var reading: [Generation] = []
        for mark in checkpoint.reading {
            guard let generation = take(mark) else {
                goneWhileStopped(mark)
                continue
            }
            try generation.restore(mark, path: path)
            reading.append(generation)
        }
        for mark in checkpoint.retired {
            guard let generation = take(mark) else {
                if mark.knownSize > mark.offset { goneWhileStopped(mark) }  // its late bytes, unread
                continue
            }
            try generation.restore(mark, path: path)
            if generation.recordedTail == nil { retired.append(generation) }
        }
        let last = checkpoint.reading.last!.identity
        let atName = try? Generation.open(name, in: directory!).0
        if atName.map({ !$0.matches(last) }) ?? true {
            // Renamed away while no follower ran: what was born at the name since, in order of
            // birth; a change time orders nothing (a rename changes it), so without birth times
            // only the file at the name is read, and what came between is reported.
            let born = candidates.filter { last.isBorn(before: $0.identity) }.sorted { $0.identity.isBorn(before: $1.identity) }
            if !last.birthIsChangeTime && born.allSatisfy({ !$0.identity.birthIsChangeTime }) {
                reading += born
            } else if let atName, !reading.contains(where: { $0.fileIdentity == atName.fileIdentity }) {
                statistics.uncountedLosses += 1
                report(.lost(bytes: 0, reason: .goneWhileStopped))
                reading.append(atName)
            }
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

    /// Reports the file `mark` names as not found again: the bytes it was seen to hold past its
    /// offset, and what was appended after, which no one can count.
    private func goneWhileStopped(_ mark: FollowedFile.Checkpoint.Mark) {
        let bytes = max(0, mark.knownSize - mark.offset)
        statistics.lostBytes += bytes
        statistics.uncountedLosses += 1
        report(.lost(bytes: bytes, reason: .goneWhileStopped))
    }

    /// The regular files in the directory named as a rotation names the followed one (the name
    /// itself included; ``isRotationName(_:)``), but those excluded, opened.
    private func filesNamedAfterFollowed() throws(FileError) -> [Generation] {
        guard let directory else { return [] }
        let excluded = self.excluded.withLock { $0 }
        return try rotationNames().compactMap { candidate in
            guard let generation = try? Generation.open(candidate, in: directory).0, !excluded.contains(generation.fileIdentity)
            else { return nil }
            return generation
        }
    }

    /// The names in the directory that a rotation gives the followed file (``isRotationName(_:)``).
    func rotationNames() throws(FileError) -> [Pathname] {
        guard let directory else { return [] }
        return try directory.entryNames().filter(isRotationName)
    }

    /// Names of files a rotation compressed: never read as generations.
    static let compressedSuffixes = [".gz", ".bz2", ".xz", ".zst", ".lz4", ".lzma", ".Z", ".zip", ".br"]

    /// Whether `candidate` is the followed name, or a name logrotate gives it: `NAME.N` (`rotate`
    /// with shifts), `NAME-` and a suffix (`dateext`: a date, or what `dateformat` makes), but
    /// not one a rotation compressed (`.gz`, `.xz`, ...). Not `NAME.bak`, `NAME2`, `NAME.state`:
    /// files beside it that no rotation made.
    func isRotationName(_ candidate: Pathname) -> Bool {
        guard candidate.bytes.starts(with: name.bytes) else { return false }
        let rest = candidate.bytes.dropFirst(name.bytes.count)
        guard let separator = rest.first else { return true }
        let tail = rest.dropFirst()
        switch separator {
        case UInt8(ascii: "."): return !tail.isEmpty && tail.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        case UInt8(ascii: "-"): return !tail.isEmpty && !Self.compressedSuffixes.contains { candidate.description.hasSuffix($0) }
        default: return false
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

    /// Whether its first `fingerprint.length` bytes have the CRC-32 `fingerprint.crc`.
    func startsWith(_ fingerprint: (crc: UInt32, length: Int), path: Pathname) -> Bool {
        guard let first = try? Self.read(descriptor, at: 0, count: fingerprint.length, path: path) else { return false }
        return first.count == fingerprint.length && CRC32(first).value == fingerprint.crc
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
