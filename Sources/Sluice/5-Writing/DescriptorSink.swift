/// A sink that streams chunks to an open descriptor: standard output, a pipe, a socket.
///
/// It cannot be atomic: what was written stays written. On an error the pipeline throws, and a
/// command must say so with its exit status and message. A reader that went away shows up as a
/// ``FileError`` with code ``FileError/Code/closed`` (`EPIPE`; the process must ignore
/// `SIGPIPE` to see it), which the CLI turns into a quiet exit with status 141.
///
/// Writes run on the sink's own thread. The descriptor is not closed. A
/// descriptor in non-blocking mode is waited on in `poll(2)` while it answers `EAGAIN`.
public actor DescriptorSink: ChunkSink {
    nonisolated let executor = BlockingIOExecutor(label: "sluice.descriptor-sink")
    /// The descriptor written to.
    package nonisolated let descriptor: Descriptor
    /// The name messages use (`-` for standard output).
    package nonisolated let path: Pathname
    private let system: SystemCalls

    /// The sink's own thread: every method of the actor, so every system call,
    /// runs on its dedicated thread.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    /// Streams to `descriptor`.
    ///
    /// - Parameters:
    ///   - descriptor: an open, writable descriptor (default standard output).
    ///   - path: the name messages use.
    public init(_ descriptor: Descriptor = .standardOutput, path: Pathname = "-") {
        self.init(descriptor, path: path, system: .live)
    }

    init(_ descriptor: Descriptor, path: Pathname, system: SystemCalls) {
        self.descriptor = descriptor
        self.path = path
        self.system = system
    }

    /// Writes every byte of `chunk` (`write(2)`, retried on `EINTR` and short writes).
    ///
    /// - Throws: ``FileError`` (operation `write`), e.g. code `closed` for `EPIPE`.
    public func write(_ chunk: Chunk) throws {
        try descriptor.write(chunk, path: path, system: system)
    }

    /// Writes every byte of `chunks`, in order, with as few `writev(2)` calls as they allow.
    ///
    /// - Throws: ``FileError`` (operation `write`), e.g. code `closed` for `EPIPE`.
    public func write(contentsOf chunks: [Chunk]) throws {
        try descriptor.write(chunks, path: path, system: system)
    }

    /// The sink's own executor: the writer stage runs on the thread that writes.
    public nonisolated var preferredExecutor: (any TaskExecutor)? { executor }

    /// Nothing to make final: the bytes are already written. A task cancelled before this
    /// point still ends as cancelled, as with every other sink.
    ///
    /// - Throws: `CancellationError` if the task was cancelled.
    public func commit() throws {
        try Task.checkCancellation()
    }

    /// Nothing to take back.
    public func abort() {}
}
