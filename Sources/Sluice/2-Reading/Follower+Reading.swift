extension Follower {
    /// The next chunk of the current generation from its position, or `nil` at its end; a
    /// truncation found on the way is handled first (``recoverTruncation(of:size:)``).
    func readCurrent() throws -> FollowedChunk? {
        guard let generation = current else { return nil }
        let seen = generation.knownSize
        let size = try size(of: generation)
        // Shorter than the position, or other first bytes (truncated and written again past
        // the position, checked after each read, so bytes of a file truncated between the fstat
        // and the read are never shipped): a truncation. One `pread(2)` of 1 KiB a chunk. So is
        // a resumed file whose bytes before the position are not those recorded.
        if size < generation.position || generation.recordedTail != nil {
            return try truncated(generation, seen: seen, size: size)
        }
        guard size > generation.position else {
            return try generation.firstBytesMatch(path: path) ? nil : truncated(generation, seen: seen, size: size)
        }
        return try read(generation, isLate: false) ?? truncated(generation, seen: seen, size: size)
    }

    /// Recovers a truncation of the current generation, then reads on.
    private func truncated(_ generation: Generation, seen: Int64, size: Int64) throws -> FollowedChunk? {
        generation.knownSize = seen
        try recoverTruncation(of: generation, size: size)
        return try readCurrent()
    }

    /// Late bytes: a chunk of a generation left for a newer one that has grown since.
    func readRetired() throws -> FollowedChunk? {
        for generation in retired where try size(of: generation) > generation.position {
            guard let chunk = try read(generation, isLate: true) else { continue }
            statistics.lateBytes += Int64(chunk.chunk.count)
            report(.late(bytes: Int64(chunk.chunk.count), generation: generation.identity))
            return chunk
        }
        return nil
    }

    /// The generation's size now (`fstat(2)`), recording growth.
    private func size(of generation: Generation) throws -> Int64 {
        let size: Int64
        do { size = try generation.descriptor.status().size } catch { throw FileError.fstat(path: path, errno: error) }
        if size > generation.knownSize {
            generation.knownSize = size
            generation.lastGrowth = .now
            lastActivity = .now
        }
        return size
    }

    /// Reads at most a chunk at the generation's position (`pread(2)`); `nil` when there was
    /// nothing, or, for the current generation, when its first bytes changed (a truncation).
    private func read(_ generation: Generation, isLate: Bool) throws -> FollowedChunk? {
        let offset = generation.position
        let descriptor = generation.descriptor
        let path = self.path
        let want = Int(min(Int64(options.chunkSize), max(1, generation.knownSize - offset)))
        let chunk = try Chunk(allocating: want) { (buffer) throws(FileError) -> Int in
            do throws(ErrorNumber) { return try descriptor.read(fromAbsoluteOffset: offset, into: buffer) } catch {
                throw FileError.read(path: path, errno: error)
            }
        }
        guard !chunk.isEmpty, try isLate || generation.firstBytesMatch(path: path) else { return nil }
        afterRead.withLock { $0 }?()
        generation.consumed(chunk)
        statistics.bytesRead += Int64(chunk.count)
        lastActivity = .now
        let position = FollowedFile.Position(generation: generation.identity, offset: offset)
        return FollowedChunk(chunk: chunk, position: position, isLate: isLate, checkpoint: checkpoint)
    }

    /// A copytruncate: the bytes from the position to the end of the copy beside the file (one
    /// whose first bytes and whose bytes before the position match) are read first, as a
    /// complete generation; then the file from offset 0. What was in neither is reported lost,
    /// a lower bound: the bytes seen to exist past the position that the copy does not hold.
    func recoverTruncation(of generation: Generation, size: Int64) throws {
        let copy = try findCopy(of: generation)
        let readUpTo = generation.position
        let recovered = copy.map { $0.generation.knownSize - readUpTo } ?? 0
        let covered = copy?.generation.knownSize ?? generation.position
        let lost = generation.knownSize - covered
        report(.truncated(copy: copy.map { directory!.path.appending($0.name) }, recovered: recovered))
        lose(lost, .truncated)
        if recovered > 0 {
            // Behind the copy's end: the writes after the copy were not watched as they came.
            statistics.uncountedLosses += 1
            report(.lost(bytes: 0, reason: .truncatedWhileBehind))
        }
        statistics.rotations += 1
        // The file again from 0, as a new reading of the same inode.
        generation.position = 0
        generation.knownSize = size
        generation.tail = []
        generation.recordedTail = nil
        generation.lastGrowth = .now
        generation.fingerprint = try Generation.fingerprint(
            of: generation.descriptor, upTo: Generation.fingerprintLength, path: path)
        if let copy {
            copiesRead = (copiesRead + [copy.generation.fileIdentity]).suffix(64)
            copy.generation.position = readUpTo
            copy.generation.isComplete = true
            queue.insert(generation, at: 0)
            current = copy.generation
        }
        lastActivity = .now
    }

    /// The file beside the followed one, named after it, that holds a copy of `generation` up to
    /// its position.
    private func findCopy(of generation: Generation) throws -> (generation: Generation, name: Pathname)? {
        guard let directory else { return nil }
        let names = (try? directory.entryNames()) ?? []
        // A copy is named after the file (`app.log.1`, `app.log-20261207`), as logrotate names it.
        for candidate in names where candidate != name && candidate.bytes.starts(with: name.bytes) {
            guard let other = try? Generation.open(candidate, in: directory).0,
                !excluded.withLock({ $0.contains(other.fileIdentity) })
            else { continue }
            if try generation.isCopied(by: other, path: directory.path.appending(candidate)) {
                return (other, candidate)
            }
        }
        return nil
    }
}
