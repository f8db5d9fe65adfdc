#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A regular file that grows: each chunk is written in place at the file's end, as
/// `sluice follow -o` ships a live file.
///
/// Unlike ``FileSink``, which makes a destination appear whole or not at all, this is an output
/// that grows while it is written: what was written stays, also when the work is cancelled or
/// fails. ``commit()`` makes it durable (`fsync(2)`); ``length`` is the file's length in bytes,
/// the bytes it held when opened plus those written. A consumer that resumes after a crash cuts
/// it back (``cutBack(to:)``) to the length that held what it had acknowledged.
///
/// ```swift
/// let sink = try await AppendingFileSink.open("shipped.log", appending: true)
/// for try await piece in try await FollowedFile.open("app.log") {
///     try await sink.write(piece.chunk)
/// }
/// ```
///
/// Concurrency contract: an actor whose every system call runs on a dedicated thread of its own
/// (``preferredExecutor``), never on the cooperative pool; writes are applied in call order.
public actor AppendingFileSink: ChunkSink {
    private nonisolated let executor: BlockingIOExecutor
    private let descriptor: Descriptor
    private let system: SystemCalls
    /// The destination, for messages.
    public nonisolated let path: Pathname
    /// The file's device and inode.
    package nonisolated let identity: FileIdentity
    /// The file's length: the bytes it held when opened plus those written since, in bytes.
    public private(set) var length: Int64

    /// The actor's executor: its dedicated thread.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    public nonisolated var preferredExecutor: (any TaskExecutor)? { executor }

    private init(descriptor: Descriptor, path: Pathname, status: FileStatus, executor: BlockingIOExecutor, system: SystemCalls) {
        self.executor = executor
        self.system = system
        identity = status.identity
        self.descriptor = descriptor
        self.path = path
        length = status.size
    }

    /// Opens `path` for appending: a new file (mode 0666 less the umask), or, with `appending`,
    /// an existing one too, written from its current end.
    ///
    /// - Throws: ``FileError``: code `alreadyExists` for an existing file without `appending`
    ///   (as `copy` refuses one without `--force`); `unsupported` for something other than a
    ///   regular file (a FIFO or a device is written by `-c` and a redirection); `open` and
    ///   `fstat` failures with their errno.
    public static func open(_ path: Pathname, appending: Bool) async throws(FileError) -> AppendingFileSink {
        try open(path, appending: appending, executor: BlockingIOExecutor(label: "sluice.append"))
    }

    /// ``open(_:appending:)`` with its calls on `executor`, shared with the reader whose chunks
    /// it writes (``FollowedFile``'s): a chunk is then written on the thread that read it, with
    /// no hand-off between threads. Call it on `executor`'s thread (it opens the file).
    package static func open(
        _ path: Pathname, appending: Bool, executor: BlockingIOExecutor, system: SystemCalls = .live
    ) throws(FileError) -> AppendingFileSink {
        let flags = O_WRONLY | O_CREAT | (appending ? 0 : O_EXCL) | O_NONBLOCK
        let descriptor = try Descriptor.open(path, flags, system: system)
        let status = try descriptor.statusClosingOnFailure(path: path)
        guard status.kind == .regular else {
            try? descriptor.close(system: system)
            throw FileError(
                code: .unsupported, operation: .open, path: path,
                reason: "not a regular file: write it in place with -c and a redirection")
        }
        do { try descriptor.seek(to: status.size, system: system) } catch {
            try? descriptor.close(system: system)
            throw FileError.lseek(path: path, errno: error)
        }
        return AppendingFileSink(descriptor: descriptor, path: path, status: status, executor: executor, system: system)
    }

    /// Writes `chunk` at ``length`` and moves the length on (a hole chunk is written as zeros).
    ///
    /// - Throws: ``FileError`` (operation `write`) with the errno; the bytes before the failure
    ///   may be in the file, ``length`` does not count them (and the next write goes after them:
    ///   cut back, ``cutBack(to:)``, before writing on).
    public func write(_ chunk: Chunk) throws {
        let (descriptor, system) = (self.descriptor, self.system)
        do throws(ErrorNumber) {
            try chunk.withUnsafeBytes { (bytes) throws(ErrorNumber) in try descriptor.write(contentsOf: bytes, system: system) }
        } catch {
            throw FileError.write(path: path, errno: error)
        }
        length += Int64(chunk.count)
    }

    /// Makes what was written durable: `fsync(2)`.
    ///
    /// - Throws: ``FileError`` (operation `fsync`) with the errno.
    public func commit() throws(FileError) {
        do { try descriptor.synchronize(system: system) } catch { throw FileError.fsync(path: path, errno: error) }
    }

    /// Cuts the file back to `length` bytes (`ftruncate(2)`), makes that durable (`fsync(2)`),
    /// and writes on from there: what a consumer that resumes does with the bytes written after
    /// the last length it recorded (never acknowledged, so read and written again).
    ///
    /// - Throws: ``FileError``: code `unsupported` for a length beyond the file's (a cut back
    ///   never makes a hole); `ftruncate`, `fsync` or `lseek` failures with their errno.
    public func cutBack(to length: Int64) throws(FileError) {
        guard (0...self.length).contains(length) else {
            throw FileError(
                code: .unsupported, operation: .ftruncate, path: path,
                reason: "it holds \(self.length) bytes, fewer than the \(length) to keep")
        }
        do { try descriptor.setSize(length, system: system) } catch { throw FileError.ftruncate(path: path, errno: error) }
        try commit()
        do { try descriptor.seek(to: length, system: system) } catch { throw FileError.lseek(path: path, errno: error) }
        self.length = length
    }

    /// Nothing is taken back: the bytes written stay (they were shipped).
    public func abort() {}

    deinit { try? descriptor.close() }
}
