#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A regular file that grows: each chunk is written in place at the file's end, at an explicit
/// offset (`pwrite(2)`), as `sluice follow -o` ships a live file.
///
/// Unlike ``FileSink``, which makes a destination appear whole or not at all, this is an output
/// that grows while it is written: what was written stays, also when the work is cancelled or
/// fails. ``commit()`` makes it durable (`fsync(2)`); ``length`` is the file's length in bytes,
/// the bytes it held when opened plus those written.
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
    /// The destination, for messages.
    public nonisolated let path: Pathname
    /// The file's device and inode.
    package nonisolated let identity: FileIdentity
    /// The file's length: the bytes it held when opened plus those written since, in bytes.
    public private(set) var length: Int64

    /// The actor's executor: its dedicated thread.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    public nonisolated var preferredExecutor: (any TaskExecutor)? { executor }

    private init(descriptor: Descriptor, path: Pathname, status: FileStatus, executor: BlockingIOExecutor) {
        self.executor = executor
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
    package static func open(_ path: Pathname, appending: Bool, executor: BlockingIOExecutor) throws(FileError) -> AppendingFileSink {
        let flags = O_WRONLY | O_CREAT | (appending ? 0 : O_EXCL) | O_NONBLOCK
        let descriptor = try Descriptor.open(path, flags)
        let status = try descriptor.statusClosingOnFailure(path: path)
        guard status.kind == .regular else {
            try? descriptor.close()
            throw FileError(
                code: .unsupported, operation: .open, path: path,
                reason: "not a regular file: write it in place with -c and a redirection")
        }
        return AppendingFileSink(descriptor: descriptor, path: path, status: status, executor: executor)
    }

    /// Writes `chunk` at ``length`` and moves the length on (a hole chunk is written as zeros).
    ///
    /// - Throws: ``FileError`` (operation `write`) with the errno; the bytes before the failure
    ///   may be in the file, ``length`` does not count them.
    public func write(_ chunk: Chunk) throws {
        let offset = length
        let descriptor = self.descriptor
        do throws(ErrorNumber) {
            try chunk.withUnsafeBytes { (bytes) throws(ErrorNumber) in try descriptor.write(toAbsoluteOffset: offset, bytes) }
        } catch {
            throw FileError.write(path: path, errno: error)
        }
        length += Int64(chunk.count)
    }

    /// Makes what was written durable: `fsync(2)`.
    ///
    /// - Throws: ``FileError`` (operation `fsync`) with the errno.
    public func commit() throws {
        do { try descriptor.synchronize() } catch { throw FileError.fsync(path: path, errno: error) }
    }

    /// Nothing is taken back: the bytes written stay (they were shipped).
    public func abort() {}

    deinit { try? descriptor.close() }
}
