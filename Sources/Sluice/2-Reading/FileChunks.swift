#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A file read as an asynchronous sequence of chunks, pull-based: a chunk is read only when the
/// consumer asks for it.
///
/// Each call to `next()` performs the reads for at most one chunk of `chunkSize` bytes
/// (default 1 MiB) and returns it, or `nil` at end of file. With no call to `next()`, the file
/// offset does not move: there is no read-ahead, so a slow consumer slows the reads and memory
/// holds at most the chunk in hand. The end of the file is where `read(2)` returns 0, never
/// what `st_size` says: files in /proc report 0 bytes and still have content, files in /sys
/// report 4096, files grow and shrink while they are read.
///
/// Works on regular files, pipes, FIFOs and character devices. Reads run on a dedicated thread
/// of the reader's own, never on the cooperative pool; a read that waits on an idle pipe
/// is woken by task cancellation and throws `CancellationError`.
///
/// ```swift
/// let chunks = try await FileChunks.open("data.bin", chunkSize: 256 * 1024)
/// for try await chunk in chunks {
///     print(chunk.count)
/// }
/// ```
///
/// Concurrency contract: the sequence is single-pass and has one consumer; iterating it twice
/// continues where the first iteration stopped. It may be sent to another task before
/// iteration. Iterators are not `Sendable`.
public struct FileChunks: AsyncSequence, Sendable {
    /// The default chunk size: 1 MiB.
    public static let defaultChunkSize = 1 << 20

    let reader: FileReader

    /// The path read, or `-` for standard input.
    package var path: Pathname { reader.path }
    /// The largest chunk `next()` returns, in bytes.
    package var chunkSize: Int { reader.chunkSize }
    /// The executor the file's reads run on: its own `BlockingIOExecutor`.
    ///
    /// A consumer that pulls chunks in a loop (a pipeline's read stage) runs best on it: each
    /// `next()` then reads on the thread it is already on, with no thread hand-off.
    package var preferredExecutor: any TaskExecutor { reader.executor }
    /// What `fstat(2)` said when the file was opened.
    package let status: FileStatus

    /// The source's size in bytes when it is meaningful (a regular file with a non-zero size),
    /// for progress; `nil` for pipes, devices and files that report 0.
    public var expectedSize: Int64? {
        status.kind == .regular && status.size > 0 ? status.size : nil
    }

    /// The descriptor a copy that the kernel makes reads from: that of a file opened by path
    /// (``open(_:chunkSize:findsHoles:)``) and not yet read, whose whole content from offset 0 is the
    /// data; `nil` for a descriptor given by the caller (``reading(_:path:chunkSize:findsHoles:)``), whose
    /// offset may be anywhere.
    var kernelCopySource: Descriptor? {
        reader.ownsDescriptor ? reader.openDescriptor : nil
    }

    /// What changed in the file while it was read (its size, modification or status change
    /// time, since it was opened: ``FileStatus/changes(to:)``), or `nil`; call it once the reads
    /// are over.
    package func changeSinceOpen() -> String? {
        reader.changeSinceOpen()
    }

    /// The system calls the reads go through.
    var system: SystemCalls { reader.system }

    /// Whether a file whose blocks say it has holes is read as data: its holes are not looked
    /// for (`findsHoles` off, as for `--verify`), or its map was distrusted (``HoleMap``). A copy
    /// through the pipeline then finds its holes again as whole zero blocks (as
    /// ``FileChunks/HoleMode/always``); a distrusted map is not followed by `copy_file_range(2)` either.
    let readsHolesAsData: Bool

    private init(reader: FileReader, status: FileStatus) {
        self.reader = reader
        self.status = status
        readsHolesAsData = status.mayHaveHoles && reader.extents == nil
    }

    /// Opens `path` for reading (`open(2)` with `O_RDONLY`, on a dedicated thread: opening a
    /// FIFO waits for its writer there, not on the cooperative pool).
    ///
    /// - Parameters:
    ///   - path: the file to read; symbolic links are followed.
    ///   - chunkSize: the largest chunk in bytes; at least 1.
    ///   - findsHoles: whether a regular file's holes come out as hole chunks
    ///     (``Chunk/hole(count:)``, at most `chunkSize` each, as data chunks: a hole holds no
    ///     memory, but a `map` or a ``ChunkTransform`` that makes data of it holds as much as a
    ///     data chunk, no more), found with `lseek(2)`'s `SEEK_DATA` and `SEEK_HOLE`
    ///     (``FileChunks/HoleMode/auto`` and ``FileChunks/HoleMode/always``), or as zeros read with `read(2)`
    ///     (``FileChunks/HoleMode/never``). Default `true`. A file that reports size 0 (/proc) and a
    ///     file system that does not answer `SEEK_DATA` are read plainly either way. Pass
    ///     `false` for a copy that verifies its output (``PipelineOptions/verifiesOutput``): it
    ///     must read every byte, not believe the map.
    ///
    /// Every `open(2)`, `lseek(2)` and `read(2)` of the file runs on a thread of its own that
    /// the sequence starts, never on the cooperative pool.
    /// - Returns: the open sequence; the descriptor closes at end of file or when the sequence
    ///   and its iterators are gone.
    /// - Throws: ``FileError`` (`open`, `fstat`; `isDirectory` for a directory).
    public static func open(
        _ path: Pathname, chunkSize: Int = defaultChunkSize, findsHoles: Bool = true
    ) async throws -> FileChunks {
        try await open(path, chunkSize: chunkSize, findsHoles: findsHoles, executor: nil)
    }

    /// The same, on `executor`: the thread every `open(2)`, `lseek(2)` and `read(2)` of the file
    /// runs on; `nil` starts one of its own. Given one (shared with the file's ``FileSink``, say,
    /// as ``Copier`` does), everything of the file that runs on it runs serially: a read
    /// that waits (a FIFO without a writer) holds up every other job of that executor, so give
    /// one only to a regular file, or to no one else meanwhile.
    package static func open(
        _ path: Pathname, chunkSize: Int = defaultChunkSize, findsHoles: Bool = true, executor: BlockingIOExecutor?
    ) async throws -> FileChunks {
        try await open(
            path, descriptor: nil, ownsDescriptor: true, chunkSize: chunkSize, findsHoles: findsHoles, executor: executor,
            system: .live)
    }

    /// Opens the file at `location` for reading, as ``open(_:chunkSize:findsHoles:)`` does a
    /// path: the entry of an open directory is opened with `openat(2)`, so its path may be
    /// longer than `PATH_MAX`.
    ///
    /// - Parameters:
    ///   - location: the file; messages name its `FileLocation/path`.
    ///   - followsLinks: whether a symbolic link at the location is followed; `false` adds
    ///     `O_NOFOLLOW` (a link then fails with `ELOOP`), as a tree's walk needs.
    ///   - chunkSize: the largest chunk in bytes; at least 1.
    ///   - findsHoles: as for ``open(_:chunkSize:findsHoles:)``.
    /// - Throws: ``FileError`` (`open`, `fstat`; `isDirectory` for a directory).
    package static func open(
        at location: FileLocation, followsLinks: Bool = true, chunkSize: Int = defaultChunkSize, findsHoles: Bool = true
    ) async throws -> FileChunks {
        try await open(at: location, followsLinks: followsLinks, chunkSize: chunkSize, findsHoles: findsHoles, executor: nil)
    }

    /// The same, on `executor` (see ``open(_:chunkSize:findsHoles:)``'s package variant): the
    /// thread every read runs on, or `nil` for one of its own.
    package static func open(
        at location: FileLocation, followsLinks: Bool = true, chunkSize: Int = defaultChunkSize, findsHoles: Bool = true,
        executor: BlockingIOExecutor?
    ) async throws -> FileChunks {
        try await open(
            at: location, followsLinks: followsLinks, chunkSize: chunkSize, findsHoles: findsHoles, executor: executor,
            system: .live)
    }

    /// The seam for tests, at a `FileLocation`: the same, with the system calls to use.
    /// `takesLongHoles`: whether hole chunks may be longer than `chunkSize` (``FileReader/takesLongHoles``).
    static func open(
        at location: FileLocation, followsLinks: Bool, chunkSize: Int, findsHoles: Bool, takesLongHoles: Bool = false,
        executor: BlockingIOExecutor?, system: SystemCalls
    ) async throws -> FileChunks {
        let reader = try FileReader(
            path: location.path, descriptor: nil, ownsDescriptor: true, chunkSize: chunkSize, findsHoles: findsHoles,
            takesLongHoles: takesLongHoles, executor: executor, system: system, location: location,
            extraOpenFlags: followsLinks ? 0 : O_NOFOLLOW)
        let status = try await reader.open()
        return FileChunks(reader: reader, status: status)
    }

    /// Reads an already open descriptor, such as standard input, which it does not close.
    ///
    /// - Parameters:
    ///   - descriptor: an open descriptor readable from its current offset.
    ///   - path: the name messages use (`-` for standard input).
    ///   - chunkSize: the largest chunk in bytes; at least 1.
    ///   - findsHoles: as for ``open(_:chunkSize:findsHoles:)``, from the descriptor's offset.
    /// - Throws: ``FileError`` from `fstat(2)`.
    public static func reading(
        _ descriptor: Descriptor, path: Pathname = "-", chunkSize: Int = defaultChunkSize, findsHoles: Bool = true
    ) async throws -> FileChunks {
        try await open(
            path, descriptor: descriptor, ownsDescriptor: false, chunkSize: chunkSize, findsHoles: findsHoles, system: .live)
    }

    /// The seam for tests: the same, with the system calls to use; `takesLongHoles` as above.
    static func open(
        _ path: Pathname, descriptor: Descriptor?, ownsDescriptor: Bool, chunkSize: Int, findsHoles: Bool = true,
        takesLongHoles: Bool = false, executor: BlockingIOExecutor? = nil, system: SystemCalls
    ) async throws -> FileChunks {
        let reader = try FileReader(
            path: path, descriptor: descriptor, ownsDescriptor: ownsDescriptor, chunkSize: chunkSize,
            findsHoles: findsHoles, takesLongHoles: takesLongHoles, executor: executor, system: system)
        let status = try await reader.open()
        return FileChunks(reader: reader, status: status)
    }

    /// Makes the iterator; call it once per sequence (the file is read once).
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(reader: reader, readsCanWait: status.kind != .regular)
    }

    /// Pulls chunks from the file, one read per `next()`.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let reader: FileReader
        /// Whether a read may wait for data indefinitely (a pipe, a FIFO, a terminal, a socket).
        let readsCanWait: Bool

        /// Reads and returns the next chunk, or `nil` at end of file.
        ///
        /// - Throws: ``FileError`` (operation `read`) with path and errno; `CancellationError`
        ///   when the task is cancelled (also while the read waits on an idle pipe).
        public mutating func next() async throws -> Chunk? {
            try Task.checkCancellation()
            let reader = self.reader
            if !readsCanWait && reader.executor.isCurrentThread {
                // A regular file's read never waits for data, and this task already runs on the
                // reader's thread (a pipeline's read stage does): read here, with no hand-off.
                return try reader.nextChunkOnReaderThread()
            }
            return try await withTaskCancellationHandler {
                try await reader.nextChunk()
            } onCancel: {
                reader.cancel()
            }
        }
    }
}
