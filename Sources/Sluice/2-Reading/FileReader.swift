#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The state behind a ``FileChunks``: one descriptor, read on a dedicated thread.
///
/// An actor whose executor is a ``BlockingIOExecutor`` (its own, or one given and then shared
/// with the file's sink), so every `open(2)`, `poll(2)` and `read(2)` it makes runs off the
/// cooperative pool. Reads happen only inside ``nextChunk()``: there is no read-ahead.
actor FileReader {
    nonisolated let executor: BlockingIOExecutor
    nonisolated let path: Pathname
    /// Where the file is opened: ``path`` itself, or a name in an open directory.
    nonisolated let location: FileLocation
    /// Flags added to the `open(2)` (`O_NOFOLLOW` for an entry of a tree).
    nonisolated let extraOpenFlags: CInt
    nonisolated let chunkSize: Int
    nonisolated let system: SystemCalls
    /// Wakes a blocked `poll(2)` on cancellation: made by ``open()`` only for a file whose reads
    /// can block for ever (not a regular file, which would pay a `pipe2(2)` and two `close(2)`
    /// for nothing); a ``cancel()`` before then is kept as `signalled` and given to the pipe
    /// when it is made, so it is never lost.
    nonisolated let wake = LockedValue<(pipe: WakePipe?, signalled: Bool)>((nil, false))
    /// Runs just before each wait in `poll(2)`, for tests that order an event after it.
    nonisolated let willWait = LockedValue<(@Sendable () -> Void)?>(nil)

    // The reading state is confined to `executor`'s thread: the actor's methods run there, and
    // `nextChunkOnReaderThread()` checks that its caller does. It is `nonisolated(unsafe)` so that
    // this synchronous path reaches it with a thread check rather than `assumeIsolated`, which
    // costs two allocations per call (per chunk of a copy).
    private nonisolated(unsafe) var descriptor: Descriptor?
    /// Whether the reader opened the file itself (by path), so that it reads from offset 0.
    let ownsDescriptor: Bool
    private nonisolated(unsafe) var status: FileStatus?
    private nonisolated(unsafe) var isAtEnd = false
    /// What changed in the file between its open and its end (``changeSinceOpen()``), taken
    /// when the end was read, before the descriptor is closed.
    private nonisolated(unsafe) var changeAtEnd: String?
    /// Whether to look for holes (`SEEK_DATA`/`SEEK_HOLE`) in a regular file.
    nonisolated let findsHoles: Bool
    /// Whether a hole chunk may be longer than ``chunkSize`` (up to ``maximumHoleChunk``): only
    /// for a consumer that never turns a hole into data, Sluice's own copier. Anyone else's code
    /// (a `map`, a transform) may make a data chunk of the hole's length, so its holes come at
    /// most ``chunkSize`` long, and the pipeline's memory bound counts them as data chunks.
    nonisolated let takesLongHoles: Bool
    /// Where the reads stand in a regular file whose holes are looked for; `nil` when they are
    /// not (a pipe, a file that reports size 0, a file system that does not answer).
    nonisolated(unsafe) var extents: ExtentCursor?
    /// Set by ``open()`` when the file's hole map disagrees with its allocated blocks
    /// (``HoleMap``): the file is read as data, whatever the map says.
    nonisolated(unsafe) var distrustsHoleMap = false
    /// The data extents of the hole map ``open()`` read and trusted (``HoleMap/dataExtents``),
    /// for a kernel copy to follow; `nil` when there was no map, it was distrusted, or it had
    /// too many extents to keep, or when the reader does not look for holes.
    nonisolated(unsafe) var dataExtents: [Range<Int64>]?

    nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    init(
        path: Pathname, descriptor: Descriptor?, ownsDescriptor: Bool, chunkSize: Int, findsHoles: Bool = true,
        takesLongHoles: Bool = false, executor: BlockingIOExecutor? = nil, system: SystemCalls, location: FileLocation? = nil,
        extraOpenFlags: CInt = 0
    ) throws(FileError) {
        precondition(chunkSize > 0, "chunkSize must be at least 1 byte")
        self.executor = executor ?? BlockingIOExecutor(label: "sluice.reader")
        self.path = path
        self.location = location ?? FileLocation(path: path)
        self.extraOpenFlags = extraOpenFlags
        self.descriptor = descriptor
        self.ownsDescriptor = ownsDescriptor
        self.chunkSize = chunkSize
        self.findsHoles = findsHoles
        self.takesLongHoles = takesLongHoles
        self.system = system
    }

    /// Opens ``path`` read-only (if not given a descriptor) and reads its status.
    ///
    /// The open uses `O_NONBLOCK`, cleared right after: a FIFO's open then returns at once
    /// instead of waiting for a writer in `open(2)`, where no cancellation could reach it; the
    /// wait happens in ``nextChunk()``'s `poll(2)`, which cancellation wakes.
    ///
    /// - Throws: ``FileError`` from `open(2)` or `fstat(2)`; `isDirectory` for a directory.
    func open() throws -> FileStatus {
        if descriptor == nil {
            let opened = try location.open(O_RDONLY | O_NONBLOCK | extraOpenFlags, system: system)
            _ = fcntl(opened.rawValue, F_SETFL, fcntl(opened.rawValue, F_GETFL) & ~O_NONBLOCK)
            descriptor = opened
        }
        do {
            // Through the seam: what the hole map is checked against (``HoleMap``).
            let status = FileStatus(try system.status(descriptor!.rawValue).get())
            if status.kind == .directory { throw FileError.isDirectory(.read, path: path) }
            self.status = status
            if status.kind != .regular {
                let pipe = try WakePipe()
                if wake.withLock({ $0.pipe = pipe; return $0.signalled }) { pipe.signal() }
            }
            if status.mayHaveHoles,
                case .success(let offset) = system.seek(descriptor!.rawValue, 0, SEEK_CUR) {
                // Its map, checked once for every reader of it (a kernel copy follows it too).
                let map = HoleMap.read(descriptor!, size: status.size, system: system)
                // A map that hides data is not followed: all is read, zero blocks become holes.
                distrustsHoleMap = map.map { !$0.agrees(withAllocated: status.allocatedBytes) } ?? false
                // From where the descriptor stands: 0 for a file opened here.
                if findsHoles && !distrustsHoleMap {
                    extents = ExtentCursor(offset: offset)
                    dataExtents = map?.dataExtents
                }
                _ = system.seek(descriptor!.rawValue, offset, SEEK_SET)
            }
            return status
        } catch let error as ErrorNumber {
            throw FileError.fstat(path: path, errno: error)
        }
    }

    /// Reads the next chunk: at most ``chunkSize`` bytes; `nil` at end of file.
    ///
    /// Regular files: reads until the chunk is full or the file ends (short reads retried), so
    /// every chunk but the last is full. Pipes, FIFOs, terminals, sockets: returns what one
    /// `read(2)` delivered as soon as there is data, so a slow writer's bytes flow on at once;
    /// while no data is there it waits in `poll(2)`, and ``cancel()`` wakes it. A read that
    /// answers `EAGAIN` (a descriptor in non-blocking mode) waits in `poll(2)` again.
    ///
    /// - Throws: ``FileError`` (operation `read`) with the path and errno; `CancellationError`
    ///   once cancelled.
    func nextChunk() throws -> Chunk? {
        try readChunk()
    }

    /// ``nextChunk()``, called synchronously by a caller that already runs on ``executor``'s
    /// thread (checked: the program stops otherwise), with no actor hop.
    nonisolated func nextChunkOnReaderThread() throws -> Chunk? {
        precondition(executor.isCurrentThread, "FileReader read off its executor's thread")
        return try readChunk()
    }

    /// The read behind both: runs on ``executor``'s thread only.
    nonisolated func readChunk() throws -> Chunk? {
        if isAtEnd { return nil }
        guard let descriptor else { preconditionFailure("FileReader used before open()") }
        if extents != nil { return try readExtent() }
        let waitsForData = status?.kind != .regular
        let system = self.system
        let wake = waitsForData ? self.wake.withLock { $0.pipe } : nil
        let path = self.path
        let willWait = self.willWait.withLock { $0 }
        let chunk = try Chunk(allocating: chunkSize) { (buffer) throws -> Int in
            do {
                while let wake {
                    willWait?()
                    // A signal left by an earlier read's cancellation is consumed and ignored.
                    guard try wake.waitUntilReadable(descriptor.rawValue, endsOnSignal: { Task.isCancelled }) else {
                        throw CancellationError()
                    }
                    do throws(ErrorNumber) {
                        return try descriptor.read(into: buffer, system: system)
                    } catch .resourceTemporarilyUnavailable {
                        // A descriptor in non-blocking mode (a standard input shared with a
                        // process that set O_NONBLOCK) whose data another reader took: wait again.
                        continue
                    }
                }
                return try descriptor.readFully(into: buffer, system: system)
            } catch let error as ErrorNumber {
                throw FileError.read(path: path, errno: error)
            }
        }
        if chunk.isEmpty { return endOfFile() }
        return chunk
    }

    /// Records the end of the file and what changed in it since it was opened, and closes a
    /// descriptor the reader opened; returns `nil`.
    nonisolated func endOfFile() -> Chunk? {
        isAtEnd = true
        if let descriptor, let status { changeAtEnd = descriptor.change(since: status, system: system) }
        closeIfOwned()
        return nil
    }

    /// What changed in the file since it was opened (``Descriptor/change(since:system:)``): by
    /// `fstat(2)` now while its descriptor is open (a kernel copy, which reads none of it here),
    /// else as it was when its end was read. Call it once the reads are over.
    nonisolated func changeSinceOpen() -> String? {
        guard let status else { return nil }
        if let descriptor { return descriptor.change(since: status, system: system) }
        return changeAtEnd
    }

    /// The open descriptor, for a copy that the kernel makes from it (``FileChunks``'s
    /// `kernelCopySource`); `nil` before ``open()`` and once closed.
    nonisolated var openDescriptor: Descriptor? { descriptor }

    /// Wakes a read blocked on an idle pipe; it then throws `CancellationError` if its task is
    /// cancelled. The signal is consumed by the next wait that sees it, so it never ends a later,
    /// uncancelled read (C34).
    nonisolated func cancel() {
        let pipe = wake.withLock { wake -> WakePipe? in
            if wake.pipe == nil { wake.signalled = true }
            return wake.pipe
        }
        pipe?.signal()
    }

    private nonisolated func closeIfOwned() {
        if ownsDescriptor, let descriptor {
            try? descriptor.close(system: system)
            self.descriptor = nil
        }
    }

    deinit {
        if ownsDescriptor, let descriptor { try? descriptor.close(system: system) }
    }
}
