#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An open file descriptor that a caller hands to Sluice: a file or pipe to read chunks from
/// (``FileChunks/reading(_:path:chunkSize:findsHoles:)``) or to write them to (``DescriptorSink``).
///
/// A plain value: it does not close itself, and Sluice never closes one it was given. Inside
/// the package it carries typed wrappers over the system calls Sluice uses (each retries
/// `EINTR`; they block, so they run on a dedicated thread, never on Swift's cooperative pool).
public struct Descriptor: Sendable, Hashable {
    /// The C descriptor number.
    public let rawValue: CInt

    /// Wraps an open descriptor number.
    public init(rawValue: CInt) {
        self.rawValue = rawValue
    }

    /// Standard input (descriptor 0).
    public static let standardInput = Descriptor(rawValue: 0)
    /// Standard output (descriptor 1).
    public static let standardOutput = Descriptor(rawValue: 1)

    /// `open(2)` with `O_CLOEXEC` added, retried on `EINTR`.
    ///
    /// - Parameters:
    ///   - path: the file to open.
    ///   - flags: `O_RDONLY`, `O_WRONLY | O_CREAT | O_EXCL`, ...
    ///   - permissions: the mode for a created file (before the umask).
    ///   - system: the system calls to use.
    /// - Throws: ``FileError`` (operation `open`) with the path and errno.
    package static func open(
        _ path: Pathname, _ flags: CInt, permissions: mode_t = 0o666, system: SystemCalls = .live
    ) throws(FileError) -> Descriptor {
        switch ErrorNumber.retryingInterrupts({ path.withCString { system.open($0, flags | O_CLOEXEC, permissions) } }) {
        case .success(let descriptor): return Descriptor(rawValue: descriptor)
        case .failure(let error): throw .open(path: path, errno: error)
        }
    }

    /// Creates a new file `<prefix><12 random characters>.tmp` in `directory`: `open(2)` with
    /// `O_CREAT | O_EXCL` added to `flags`, retrying another name while one exists. The name's
    /// length does not depend on anything outside Sluice, so leftovers are easy to find.
    ///
    /// - Returns: the descriptor and the path created.
    /// - Throws: ``FileError`` (operation `open`) with the path tried and errno.
    static func createUnique(
        in directory: Pathname, prefix: String, flags: CInt, permissions: mode_t, system: SystemCalls = .live
    ) throws(FileError) -> (Descriptor, Pathname) {
        while true {
            let path = directory.appending(uniqueName(prefix: prefix))
            do {
                return (try open(path, flags | O_CREAT | O_EXCL, permissions: permissions, system: system), path)
            } catch where error.errno == .fileExists {
                continue
            }
        }
    }

    /// A name `<prefix><12 random characters>.tmp`: twelve base-36 digits of one random 64-bit
    /// value (36^12 < 2^64), so one `getrandom(2)` per name, not one per character.
    static func uniqueName(prefix: String) -> Pathname {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789".utf8)
        var generator = SystemRandomNumberGenerator()
        var value = generator.next()
        let random = (0..<12).map { _ in
            defer { value /= 36 }
            return alphabet[Int(value % 36)]
        }
        return Pathname(bytes: Array(prefix.utf8) + random + Array(".tmp".utf8))
    }

    /// Whether `name` is one ``uniqueName(prefix:)`` made with a prefix starting `.sluice-`:
    /// `.sluice-<12 letters and digits>.tmp` (a destination's temporary file) or
    /// `.sluice-<word>-<12>.tmp` (`.sluice-spill-…`, a spill file's), as a crash or a `SIGKILL`
    /// may leave one behind. Such a file is never removed automatically (a run still under way
    /// may own it) and never copied by a tree copy.
    static func isTemporaryName(_ name: [UInt8]) -> Bool {
        let prefix = Array(".sluice-".utf8)
        let suffix = Array(".tmp".utf8)
        guard name.count >= prefix.count + 12 + suffix.count, name.starts(with: prefix), name.suffix(4).elementsEqual(suffix) else {
            return false
        }
        let random = name.dropLast(suffix.count).suffix(12)
        let separator = name[name.count - suffix.count - 13]
        let isRandom = random.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        return isRandom && (name.count == prefix.count + 12 + suffix.count || separator == UInt8(ascii: "-"))
    }

    /// `read(2)` once into `buffer`, retried on `EINTR`.
    ///
    /// - Returns: the count of bytes read (0...buffer.count); 0 means end of file.
    /// - Throws: the call's ``ErrorNumber``.
    package func read(into buffer: UnsafeMutableRawBufferPointer, system: SystemCalls = .live) throws(ErrorNumber) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return try ErrorNumber.retryingInterrupts { system.read(rawValue, base, buffer.count) }.get()
    }

    /// Reads until `buffer` is full or the file ends, retrying short reads and `EINTR`.
    ///
    /// - Returns: the count of bytes read; less than `buffer.count` only at end of file.
    /// - Throws: the ``ErrorNumber`` of a failed `read(2)`.
    package func readFully(into buffer: UnsafeMutableRawBufferPointer, system: SystemCalls = .live) throws(ErrorNumber) -> Int {
        var filled = 0
        while filled < buffer.count {
            let count = try read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]), system: system)
            if count == 0 { break }
            filled += count
        }
        return filled
    }

    /// `write(2)` once from `buffer`, retried on `EINTR`.
    ///
    /// - Returns: the count of bytes written (0...buffer.count); fewer than `buffer.count` is
    ///   not an error (a pipe with less room, a signal after some bytes).
    /// - Throws: the call's ``ErrorNumber``; `EAGAIN` from a descriptor in non-blocking mode that
    ///   cannot take a byte now.
    func write(from buffer: UnsafeRawBufferPointer, system: SystemCalls = .live) throws(ErrorNumber) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return try ErrorNumber.retryingInterrupts { system.write(rawValue, base, buffer.count) }.get()
    }

    /// `write(2)` until every byte of `buffer` is written, retrying short writes and `EINTR`.
    ///
    /// A descriptor in non-blocking mode (a standard output that another process shares and
    /// set `O_NONBLOCK` on) answers `EAGAIN` while it is full: the write then waits in
    /// `poll(2)` until it can take more, as a blocking write would, instead of failing.
    ///
    /// - Throws: the ``ErrorNumber`` of a failed `write(2)` or `poll(2)` (`EIO` for a
    ///   write that made no progress and reported nothing); bytes before it were written.
    package func write(contentsOf buffer: UnsafeRawBufferPointer, system: SystemCalls = .live) throws(ErrorNumber) {
        var written = 0
        while written < buffer.count {
            do throws(ErrorNumber) {
                let end = min(buffer.count, written + Self.maximumWriteSize)
                let count = try write(from: UnsafeRawBufferPointer(rebasing: buffer[written..<end]), system: system)
                guard count > 0 else { throw ErrorNumber.ioError }  // no progress and no error: never loop forever
                written += count
            } catch .resourceTemporarilyUnavailable {
                try waitUntilWritable()
            }
        }
    }

    /// `writev(2)` until every byte of every buffer in `vectors` is written, in order, retrying
    /// short writes and `EINTR`; at most `IOV_MAX` (1024) buffers and ``maximumWriteSize`` bytes
    /// per call.
    ///
    /// One system call writes many small buffers: a pipeline hands a batch of chunks to the
    /// kernel at once. A non-blocking descriptor that answers `EAGAIN` is waited on as in
    /// ``write(contentsOf:system:)``.
    ///
    /// - Parameters:
    ///   - vectors: the buffers; advanced in place past what was written, so on return every
    ///     `iov_len` is 0.
    ///   - system: the system calls to use (``SystemCalls/writev``).
    /// - Throws: the ``ErrorNumber`` of a failed `writev(2)` or `poll(2)`; bytes before it were written.
    package func write(gathering vectors: UnsafeMutableBufferPointer<iovec>, system: SystemCalls = .live) throws(ErrorNumber) {
        var first = 0
        while true {
            while first < vectors.count && vectors[first].iov_len == 0 { first += 1 }
            guard first < vectors.count, let base = vectors.baseAddress else { return }
            // The buffers up to ``maximumWriteSize`` bytes; a first buffer over it, cut to it.
            var (count, bytes) = (1, vectors[first].iov_len)
            while first + count < vectors.count, count < Self.maximumGatheredBuffers,
                bytes + vectors[first + count].iov_len <= Self.maximumWriteSize
            {
                bytes += vectors[first + count].iov_len
                count += 1
            }
            let result: Result<Int, ErrorNumber>
            if bytes > Self.maximumWriteSize {
                var cut = iovec(iov_base: vectors[first].iov_base, iov_len: Self.maximumWriteSize)
                result = system.writev(rawValue, &cut, 1)
            } else {
                result = system.writev(rawValue, base + first, CInt(count))
            }
            switch result {
            case .success(0): throw ErrorNumber.ioError  // no progress and no error: never loop forever
            case .success(var written):
                while written > 0 {
                    let taken = min(written, vectors[first].iov_len)
                    vectors[first].iov_base = vectors[first].iov_base.map { $0 + taken }
                    vectors[first].iov_len -= taken
                    written -= taken
                    if vectors[first].iov_len == 0 { first += 1 }
                }
            case .failure(.interrupted): continue
            case .failure(.resourceTemporarilyUnavailable): try waitUntilWritable()
            case .failure(let error): throw error
            }
        }
    }

    /// The most buffers one `writev(2)` takes on Linux (`IOV_MAX`).
    static let maximumGatheredBuffers = 1024

    /// The most bytes one `write(2)` or `writev(2)` is given: 256 KiB, as coreutils' `cat` and
    /// `cp` use. On this project's Linux 6.18 guests (ext4), the kernel's copy into the page
    /// cache slows by 2–10 µs a page in some runs (pages faulted in again on the host), the
    /// more the larger the calls: `decompress -p 2` of 256 MiB, whose writer gathered 4 MiB
    /// and more a call, spent 0.65 s of system time in such runs, 0.25 s at 256 KiB a call, and
    /// 0.05 s in the others at any size; calls past 256 KiB save nothing measurable.
    static let maximumWriteSize = 256 << 10

    /// `poll(2)` until the descriptor can be written (or is in error, which the next write
    /// reports), retried on `EINTR`.
    ///
    /// - Throws: the ``ErrorNumber`` of a failed `poll(2)`.
    func waitUntilWritable() throws(ErrorNumber) {
        var entry = pollfd(fd: rawValue, events: Int16(POLLOUT), revents: 0)
        _ = try ErrorNumber.retryingInterrupts { poll(&entry, 1, -1) }
    }

    /// `pread(2)` once into `buffer` at `offset`, retried on `EINTR`; the file offset is not
    /// used or moved.
    ///
    /// - Parameters:
    ///   - offset: where in the file to read, in bytes from its start.
    ///   - buffer: where the bytes go.
    /// - Returns: the count of bytes read (0...buffer.count); 0 means `offset` is at or past
    ///   the end of the file.
    /// - Throws: the call's ``ErrorNumber``.
    package func read(fromAbsoluteOffset offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(ErrorNumber) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return try ErrorNumber.retryingInterrupts { pread(rawValue, base, buffer.count, off_t(offset)) }
    }

    /// `pwrite(2)` of every byte of `buffer` at `offset`, retrying short writes and `EINTR`; the
    /// file offset is not used or moved.
    ///
    /// - Parameters:
    ///   - offset: where in the file to write, in bytes from its start.
    ///   - buffer: the bytes to write.
    /// - Throws: the ``ErrorNumber`` of a failed `pwrite(2)` (`EIO` for a write that made
    ///   no progress and reported nothing); bytes before it were written.
    package func write(toAbsoluteOffset offset: Int64, _ buffer: UnsafeRawBufferPointer) throws(ErrorNumber) {
        guard let base = buffer.baseAddress else { return }
        var written = 0
        while written < buffer.count {
            let count = try ErrorNumber.retryingInterrupts {
                pwrite(rawValue, base + written, buffer.count - written, off_t(offset) + off_t(written))
            }
            guard count > 0 else { throw ErrorNumber.ioError }  // no progress and no error: never loop forever
            written += count
        }
    }

    /// `fstat(2)`, through `system`.
    ///
    /// - Throws: the call's ``ErrorNumber``.
    package func status(system: SystemCalls = .live) throws(ErrorNumber) -> FileStatus {
        FileStatus(try system.status(rawValue).get())
    }

    /// `fstat(2)` of a descriptor just opened, which is closed if it fails.
    ///
    /// - Throws: ``FileError`` (operation `fstat`) naming `path`.
    package func statusClosingOnFailure(path: Pathname) throws(FileError) -> FileStatus {
        do { return try status() } catch {
            try? close()
            throw FileError.fstat(path: path, errno: error)
        }
    }

    /// `fsync(2)`, retried on `EINTR`: the file's data and metadata reach the device.
    ///
    /// - Throws: the call's ``ErrorNumber``.
    package func synchronize(system: SystemCalls = .live) throws(ErrorNumber) {
        try ErrorNumber.retryingInterrupts { system.fsync(rawValue) }.get()
    }

    /// `fsync(2)` of the directory at `path` (opened and closed through `system`): what makes
    /// the names created or replaced in it durable.
    ///
    /// - Throws: ``FileError`` (`open` or `fsync`) with the directory's path.
    package static func synchronizeDirectory(_ path: Pathname, system: SystemCalls = .live) throws(FileError) {
        let descriptor = try Descriptor.open(path, O_RDONLY | O_DIRECTORY, system: system)
        try descriptor.closeAfter(system: system) { () throws(FileError) in
            do throws(ErrorNumber) { try descriptor.synchronize(system: system) } catch {
                throw FileError.fsync(path: path, errno: error)
            }
        }
    }

    /// `close(2)`. Not retried on `EINTR` (on Linux the descriptor is released anyway).
    ///
    /// - Throws: the call's ``ErrorNumber`` (for example a delayed write error on NFS); the descriptor
    ///   is released either way.
    package func close(system: SystemCalls = .live) throws(ErrorNumber) {
        switch system.close(rawValue) {
        case .success, .failure(.interrupted): return
        case .failure(let error): throw error
        }
    }

    /// Runs `body`, then closes the descriptor whatever `body` did; a close error is ignored.
    package func closeAfter<R, E: Error>(system: SystemCalls = .live, _ body: () throws(E) -> R) throws(E) -> R {
        defer { try? close(system: system) }
        return try body()
    }
}
