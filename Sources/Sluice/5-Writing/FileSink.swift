import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A file destination that is either complete or untouched.
///
/// For a regular (or absent) destination, chunks go to a temporary file in the destination's
/// own directory (never `$TMPDIR`, so naming it cannot cross file systems): an unnamed file
/// (`O_TMPFILE`), which nothing can see and a crash or a failure leaves nowhere, where the file
/// system and `/proc` allow it; else one created with `O_CREAT | O_EXCL` and named
/// `.sluice-<12 random characters>.tmp` (the name does not grow with the destination's, so a
/// 255-byte destination name works, and leftovers after `kill -9` can be found with `ls -A`).
/// ``commit()`` sets the attributes, `fsync(2)`s the file, names it and `fsync(2)`s the
/// directory (a rename without the fsyncs can leave an empty file after a crash);
/// `synchronizes: false` skips both fsyncs. A new name is given with `linkat(2)` of the
/// descriptor (`AT_EMPTY_PATH` where the kernel allows it, else `/proc/self/fd/N`; either
/// refuses an existing name), so an append-only directory (`chattr +a`)
/// takes a new file as it does for `cp`; an existing file is replaced by a rename (of the
/// unnamed file linked under a temporary name first). A replacement the kernel would refuse
/// (an append-only or immutable directory, an append-only or immutable file, read with
/// `FS_IOC_GETFLAGS`) is refused before anything is made. On any error or cancellation
/// ``abort()`` removes the temporary file and the destination keeps its old bytes. Naming the
/// file is the *commit point*, decided as one atomic step with the `sluice` command's
/// intake of interrupting signals (a program that embeds Sluice has none): an interruption recorded before it aborts the file, one
/// after it finds the file committed.
///
/// Permission bits, never wider than `cp` would make them:
/// - A new file (no destination before, or a symbolic link replaced) is created with the
///   source's permission bits (`0666` for a source that is not a regular file) as the kernel
///   applies them at creation: the directory's default ACL, else the umask. Nothing widens
///   them afterwards.
/// - Over an existing regular file (``Options/replacesExisting``), the replacement keeps the replaced file's
///   permission bits, owner and group (where permitted: as root, or a group the user is in) and
///   access ACL, as `cp -f` and `rsync` leave them. Other hard links to the replaced file keep
///   its old bytes (the rename gives the name a new inode).
/// - With `preservesAttributes` (`--preserve`), the source's bits, times and owner (owner and
///   group where permitted); set-user-ID and set-group-ID are dropped when the owner or group
///   is not kept, as `cp -p` does.
/// - With `preservesModificationTime` alone (what `gzip` does to the files it writes), the
///   source's modification time, and nothing else of it: the bits follow the rules above.
///
/// Rules, in order (see ``create(at:source:options:)``):
/// 1. A destination that is the source (same device and inode, following symbolic links) is
///    refused: ``FileError/Code/sameFile``.
/// 2. A directory is refused (``FileError/Code/isDirectory``); callers that mean "into the
///    directory" append the source's name first.
/// 3. An existing destination that is not a regular file (`/dev/null`, a FIFO, a terminal) is
///    written in place, never replaced.
/// 4. An existing regular file, or a symbolic link (to anything but a directory, dangling or
///    not), is refused unless ``Options/replacesExisting`` is set; then it is replaced atomically: a link is
///    replaced, never written through.
///
/// Every system call runs on a thread of the sink's own (inside the package, one it may share
/// with the file's reader), never on the cooperative pool.
public actor FileSink: ChunkSink {
    enum Mode {
        /// Writing a temporary file that is named `destination` on commit: unnamed
        /// (`O_TMPFILE`, `temporary` is `nil`) or named.
        case replacing(temporary: FileLocation?, ticket: CommitGate.Ticket)
        /// Writing an existing non-regular file in place.
        case inPlace
    }

    enum State {
        case open(Descriptor, Mode)
        /// Data and attributes complete, not renamed: ``seal()`` handed the file over to its
        /// caller, who names it or removes it.
        case sealed
        case committed
        case aborted
    }

    nonisolated let executor: BlockingIOExecutor
    /// The path the data ends up at.
    package nonisolated let destination: Pathname
    /// Where the data ends up, for the system calls: ``destination`` itself, or a name in an
    /// open directory (which the sink keeps open until it is gone).
    package nonisolated let location: FileLocation
    let source: FileStatus?
    let options: Options
    let system: SystemCalls
    let gate: CommitGate
    /// The existing regular file that the commit replaces, and its access ACL (`nil`: none).
    var replaced: (status: FileStatus, accessACL: [UInt8]?)?
    var state: State = .aborted
    /// The size to set at the commit when the data so far ends in a hole (`lseek(2)` past the
    /// end makes no size by itself); `nil` when it ends in data.
    var sizeAfterHole: Int64?
    /// Where the temporary file's offset belongs after ranges copied at explicit offsets (and
    /// the holes after them), until something is written there: moved by one `lseek(2)` before
    /// the next write (``descriptorForWriting()``), and not at all when nothing follows (a
    /// small file copied whole by the kernel).
    var unsettledOffset: Int64?
    /// The temporary file's block size (`st_blksize`, 4096 where `fstat(2)` fails): the least
    /// run of zeros that ``FileChunks/HoleMode/always`` turns into a hole. Read at its first use, so a
    /// sink that never makes holes makes no `fstat(2)` for it.
    var blockSize: Int {
        if let knownBlockSize { return knownBlockSize }
        var size = 4096
        if case .open(let descriptor, _) = state, let status = try? descriptor.status(), status.blockSize > 0 { size = status.blockSize }
        knownBlockSize = size
        return size
    }
    var knownBlockSize: Int?
    var replacedDestination = false
    /// Whether a regular file or a link was at the destination when the sink was made: the
    /// commit replaces it (messages say "replace"; "create" for a new name).
    private(set) var replacesExisting = false
    var directorySynchronized = true
    /// The source's access ACL (`system.posix_acl_access`), which `preservesAttributes` gives the
    /// file: `nil` for none (``preserveAttributes(of:at:)``).
    var sourceAccessACL: [UInt8]?
    /// The source's other extended attributes, with `preservesExtendedAttributes`.
    var sourceExtendedAttributes = ExtendedAttributes()
    /// Set by ``findHolesInZeroBlocks()``.
    var findsHolesInZeroBlocks = false

    /// Conditions of the commit that did not undo it (a directory that could not be synced).
    public internal(set) var warnings: [StageWarning] = []

    /// The source's attributes that could not be read or that the file refused (each with the
    /// kind warnings name, `ExtendedAttributes.Attribute.kind`, and its error), known once
    /// the file is sealed: the caller reports them (a tree once per kind).
    var attributeRefusals: [(kind: String, error: FileError)] = []

    /// Gives the file, with `preservesAttributes`, the access ACL of the file open as `source`
    /// (read now with `fgetxattr(2)`, on the sink's thread), as `cp -p` keeps it; a source
    /// without one gives none, and the file ends without one. With
    /// `preservesExtendedAttributes`, also every other extended attribute (`flistxattr(2)`);
    /// a read that fails is a refusal naming `path`, the source's. Call it before
    /// ``commit()``; without it a preserved file ends with no access ACL.
    func preserveAttributes(of source: Descriptor, at path: Pathname) {
        sourceAccessACL = Self.accessACL(of: source)
        guard options.preservesExtendedAttributes else { return }
        do { sourceExtendedAttributes = try ExtendedAttributes.read(of: source, path: path).withoutACLs } catch {
            attributeRefusals.append(("extended attributes", error))
        }
    }

    /// The sink's thread: every method of the actor, so every system call, runs
    /// on its thread (the sink's own, or one it shares with the file's reader).
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    private init(
        location: FileLocation, source: FileStatus?, options: Options, system: SystemCalls, gate: CommitGate,
        executor: BlockingIOExecutor?
    ) {
        self.executor = executor ?? BlockingIOExecutor(label: "sluice.file-sink")
        self.destination = location.path
        self.location = location
        self.source = source
        self.options = options
        self.system = system
        self.gate = gate
    }

    /// Opens a destination by the rules above.
    ///
    /// - Parameters:
    ///   - destination: the final path.
    ///   - source: the file being copied, opened: its status (`fstat(2)` at the open) gives
    ///     same-file detection, the permission bits and `--preserve`'s attributes; `nil` for
    ///     data that does not come from a file (new files get `0666 & ~umask`).
    ///   - options: replacement, durability and attribute preservation.
    ///
    /// Its commit point is decided by the process's one gate, which the `sluice` command's
    /// signal intake feeds (a program that embeds Sluice has none: its commits are never held).
    /// A FIFO with no reader yet makes the call wait for one, until the task is cancelled.
    /// - Throws: ``FileError``: `sameFile`, `isDirectory`, `alreadyExists` (without
    ///   ``Options/replacesExisting``), or the errno of `stat`, `open` (for example `permissionDenied`);
    ///   `CancellationError` if the task is cancelled while a FIFO waits for its reader.
    public static func create(
        at destination: Pathname, source: FileChunks? = nil, options: Options = Options()
    ) async throws -> FileSink {
        try await create(at: FileLocation(path: destination), source: source?.status, options: options)
    }

    /// Opens a destination by the rules above, for the engine and tests: the one creation
    /// inside the package, every parameter but the location defaulted.
    ///
    /// - Parameters:
    ///   - location: where the data ends up: a path (`FileLocation(path:)`), or the entry of an
    ///     open directory, whose temporary file is then created, renamed and synced relative to
    ///     the directory's descriptor (`openat(2)`, `renameat2(2)`, `fsync(2)` of it), so the
    ///     destination's path may be longer than `PATH_MAX`. Messages name `FileLocation/path`.
    ///   - source: the source's status as the caller has it (an operand's `stat(2)`, a file's
    ///     `fstat(2)`); `nil` for data that does not come from a file.
    ///   - options: as for the public creation.
    ///   - system: the system calls of opens, writes, fsyncs, closes and the rename (tests
    ///     inject failures).
    ///   - gate: the gate that decides the commit point (``CommitGate/shared``: the process's).
    ///   - executor: the thread the sink's methods (every system call) run on; `nil` starts one
    ///     of its own. Given one (shared with the file's reader, as ``Copier`` does), the sink
    ///     and everything else on that executor run serially, one job at a time: a hand-off
    ///     between them wakes no other thread, and a call that waits (a write to a full pipe,
    ///     `fsync(2)`, the open of a FIFO with no reader) holds up the others. The executor must
    ///     outlive the sink.
    /// - Throws: as the public creation: ``FileError`` (`sameFile`, `isDirectory`,
    ///   `alreadyExists`, or the errno of `fstatat`, `openat`); `CancellationError` if the task
    ///   is cancelled while a FIFO waits for its reader (nothing is left open).
    package static func create(
        at location: FileLocation, source: FileStatus? = nil, options: Options = Options(), system: SystemCalls = .live,
        gate: CommitGate = .shared, executor: BlockingIOExecutor? = nil
    ) async throws -> FileSink {
        let sink = FileSink(location: location, source: source, options: options, system: system, gate: gate, executor: executor)
        if try await !sink.prepare() { try await sink.waitForReader() }
        return sink
    }

    /// The same, synchronously on the calling thread, which must be `executor`'s: the sink's
    /// isolation is checked (`assumeIsolated`), not reached by a hop. For a caller that runs on
    /// that thread already and then calls the sink the same way (``Copier``'s files of one
    /// chunk). It never waits: a synchronous caller can install no cancellation handler, so
    /// nothing could end a wait for a FIFO's reader.
    ///
    /// - Returns: the sink; `nil` when the destination is a FIFO that no reader has opened yet
    ///   (nothing was created): the caller takes the asynchronous creation, whose wait ends by
    ///   cancellation.
    /// - Throws: as ``create(at:source:options:system:gate:executor:)``, without its
    ///   `CancellationError`.
    static func createOnExecutorThread(
        at location: FileLocation, source: FileStatus?, options: Options, system: SystemCalls, executor: BlockingIOExecutor
    ) throws -> FileSink? {
        let sink = FileSink(location: location, source: source, options: options, system: system, gate: .shared, executor: executor)
        return try sink.assumeIsolated { try $0.prepare() } ? sink : nil
    }

    /// Checks the destination by the rules above and opens what the data goes to: a temporary
    /// file, or the destination itself when it is written in place.
    ///
    /// - Returns: `false` for a FIFO that no reader has opened yet, left for
    ///   ``waitForReader()``; `true` once the sink is open.
    /// - Throws: ``FileError`` (see the creations).
    private func prepare() throws -> Bool {
        let linkStatus = try Self.statusIfPresent(location)
        // What the name leads to: nothing for a name that is not there (one `fstatat(2)` for the
        // usual new file), a symbolic link's target (nil if it dangles), else the file itself.
        let followed = linkStatus?.kind == .symbolicLink ? try? location.status(followsLinks: true) : linkStatus
        if let followed, let source, followed.isSameFile(as: source) {
            throw FileError.sameFile(destination: destination)
        }
        if let followed, followed.kind == .directory {
            throw FileError.isDirectory(.create, path: destination)
        }
        if let linkStatus {
            if let followed, followed.kind != .regular {
                // A device, FIFO or socket (or a link to one, such as /dev/stdout): written in
                // place, never replaced.
                return try openInPlace(isFIFO: followed.kind == .fifo)
            }
            if !options.replacesExisting { throw FileError.destinationExists(destination) }
            // What the kernel will refuse to replace is refused before anything is made, and
            // so is a name of /dev (a link there names a device or a descriptor for every process).
            try Self.refuseUnreplaceable(location, isRegular: linkStatus.kind == .regular, system: system)
            if Self.isInDeviceDirectory(location) {
                throw FileError(
                    code: .permissionDenied, operation: .rename, path: destination,
                    reason: "a name in the /dev file system is written in place, never replaced")
            }
            replacesExisting = true
            if linkStatus.kind == .regular {
                replaced = (linkStatus, Self.accessACL(of: Self.attributePath(of: location)))
            }
        }
        // A new file gets the source's bits as the kernel applies them at creation (default
        // ACL, else umask); a file whose attributes are set at the commit starts private.
        let creationMode: UInt32 = if attributeModel != nil {
            0o600
        } else if let source, source.kind == .regular {
            source.permissions & 0o777
        } else {
            0o666
        }
        let location = location
        let system = system
        let named = options.closesSealedFile
        let (ticket, descriptor, temporary) = try gate.register(destination: destination, system: system) { () throws(FileError) in
            try Self.createTemporaryFile(beside: location, mode: creationMode, system: system, named: named)
        }
        state = .open(descriptor, .replacing(temporary: temporary, ticket: ticket))
        return true
    }

    /// Opens an existing non-regular destination for writing, without waiting: `O_NONBLOCK`,
    /// cleared once open. A FIFO fails with `ENXIO` while no reader has opened it.
    ///
    /// - Returns: `true` once open; `false` for a FIFO with no reader yet.
    /// - Throws: ``FileError`` (operation `open`).
    private func openInPlace(isFIFO: Bool) throws -> Bool {
        let opened = Result { () throws(FileError) in try location.open(O_WRONLY | O_NONBLOCK, system: system) }
        if case .failure(let error) = opened, isFIFO && error.errno == ErrorNumber(rawValue: ENXIO) { return false }
        let descriptor = try opened.get()
        _ = fcntl(descriptor.rawValue, F_SETFL, fcntl(descriptor.rawValue, F_GETFL) & ~O_NONBLOCK)
        state = .open(descriptor, .inPlace)
        return true
    }

    /// Opens the FIFO at the destination for writing once a reader has: a blocking `open(2)` on
    /// the sink's thread, which cancellation ends by an event. The cancellation handler opens
    /// the FIFO's read end itself (`O_RDONLY | O_NONBLOCK`), which lets the writer's open
    /// return, and keeps that descriptor open, under a lock, until the writer's open has
    /// returned: a cancellation that comes before the open starts (or before this is called)
    /// finds it returning at once, so no wake-up is lost. A FIFO this process may not read
    /// (`faccessat(2)`, a daemon's `mkfifo -m 622`) cannot be woken so: for it alone, the open
    /// is tried again without blocking every 10 ms, the task's cancellation checked between.
    ///
    /// - Throws: ``FileError`` (operation `open`); `CancellationError` if the task is cancelled
    ///   before a reader came (both descriptors closed, the destination untouched).
    private func waitForReader() async throws {
        let (location, system) = (location, system)
        let readable = location.name.withCString { name in
            faccessat(location.directory?.descriptor.rawValue ?? AT_FDCWD, name, R_OK, AT_EACCESS) == 0
        }
        guard readable else {
            while try !openInPlace(isFIFO: true) {
                try Task.checkCancellation()
                usleep(10_000)  // no event can wake a writer whose FIFO this process cannot read
            }
            return
        }
        let wake = LockedValue<(opened: Bool, reader: Descriptor?)>((false, nil))
        let opened = await withTaskCancellationHandler {
            Result { () throws(FileError) in try location.open(O_WRONLY, system: system) }
        } onCancel: {
            wake.withLock { wake in
                if !wake.opened { wake.reader = try? location.open(O_RDONLY | O_NONBLOCK, system: system) }
            }
        }
        guard let reader = wake.withLock({ wake in wake.opened = true; return wake.reader }) else {
            state = .open(try opened.get(), .inPlace)
            return
        }
        try? reader.close(system: system)
        if case .success(let writer) = opened { try? writer.close(system: system) }
        throw CancellationError()
    }

    /// `lstat(2)` of `path`, or `nil` if nothing is there.
    private static func statusIfPresent(_ location: FileLocation) throws(FileError) -> FileStatus? {
        do {
            return try location.status(followsLinks: false)
        } catch {
            if error.errno == .noSuchFileOrDirectory { return nil }
            throw error
        }
    }

    /// Writes every byte of `chunk` (`write(2)`, retried on `EINTR` and short writes); a hole
    /// chunk, and with ``FileChunks/HoleMode/always`` a run of zero blocks, becomes a hole of the
    /// temporary file (see ``Options/holes``).
    ///
    /// - Throws: ``FileError`` (operation `write`) with the destination path and errno, e.g.
    ///   `EFBIG` (File too large) or `ENOSPC`.
    public func write(_ chunk: Chunk) throws {
        if makesHoles { return try writeSparse([chunk]) }
        try descriptorForWriting().write(chunk, path: destination, system: system)
    }

    /// The temporary file (or in-place destination) while it is open for writes, its offset
    /// moved to ``unsettledOffset`` first if ranges were copied before.
    ///
    /// - Throws: ``FileError`` (operation `lseek`).
    func descriptorForWriting() throws(FileError) -> Descriptor {
        guard case .open(let descriptor, _) = state else {
            preconditionFailure("FileSink.write after commit or abort")
        }
        if let offset = unsettledOffset {
            do throws(ErrorNumber) { try descriptor.seek(to: offset, system: system) } catch {
                throw FileError.lseek(path: destination, errno: error)
            }
            unsettledOffset = nil
        }
        return descriptor
    }

    /// Writes every byte of `chunks` to the temporary file, in order, with as few `writev(2)`
    /// calls as they allow; hole chunks (and with ``FileChunks/HoleMode/always`` runs of zero blocks)
    /// become `lseek(2)` past them, the final size set by `ftruncate(2)` at the commit (see
    /// ``Options/holes``). A destination written in place gets zeros.
    ///
    /// - Throws: ``FileError`` (operation `write`) with the destination and errno (`ENOSPC`,
    ///   `EFBIG`, ...).
    public func write(contentsOf chunks: [Chunk]) throws {
        if makesHoles { return try writeSparse(chunks) }
        try descriptorForWriting().write(chunks, path: destination, system: system)
    }

    /// The sink's own executor: the writer stage runs on the thread that writes.
    public nonisolated var preferredExecutor: (any TaskExecutor)? { executor }

    deinit {
        switch state {
        case .open(let descriptor, let mode): Self.discard(descriptor, mode, gate: gate, system: system)
        case .sealed, .committed, .aborted: break
        }
    }
}
