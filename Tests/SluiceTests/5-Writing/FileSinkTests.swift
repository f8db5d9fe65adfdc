#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
import Testing
@testable import Sluice
import SluiceTestSupport

@Suite(.timeLimit(.minutes(3)))
struct FileSinkTests {
    static let noFsync = FileSink.Options(synchronizes: false)
    static let replacesExisting = FileSink.Options(replacesExisting: true)

    /// Writes `data` in chunks of `chunkSize` bytes.
    static func write(_ data: [UInt8], to sink: FileSink, chunkSize: Int = 1000) async throws {
        var start = 0
        while start < data.count {
            let end = min(start + chunkSize, data.count)
            try await sink.write(Chunk(data[start..<end]))
            start = end
        }
    }

    /// Opens `path` for reading on a thread of its own (opening a FIFO waits for its writer)
    /// and returns everything read until the end.
    /// A read of a file to its end on a thread of its own, started at once: a FIFO's reader is
    /// then there before the sink opens it, however busy the cooperative pool is (an `async let`
    /// child that starts the thread may wait for a pool thread while the sink waits for it).
    final class BackgroundRead: Sendable {
        private let state = LockedValue<(result: Result<[UInt8], any Error>?, waiter: CheckedContinuation<[UInt8], any Error>?)>(
            (nil, nil))

        init(_ path: Pathname) {
            DedicatedThread.start(name: "fifo-reader") { [state] in
                let result = Result { try readFile(path) }
                let waiter = state.withLock { state in
                    state.result = result
                    defer { state.waiter = nil }
                    return state.waiter
                }
                waiter?.resume(with: result)
            }
        }

        /// The bytes read, once the writer has closed the file.
        var bytes: [UInt8] {
            get async throws {
                try await withCheckedThrowingContinuation { continuation in
                    let ready = state.withLock { state -> Result<[UInt8], any Error>? in
                        if state.result == nil { state.waiter = continuation }
                        return state.result
                    }
                    if let ready { continuation.resume(with: ready) }
                }
            }
        }
    }

    // MARK: Atomic replacement

    @Test func aDestinationThatAppearsDuringTheWriteIsNotReplacedWithoutOverwrite() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out.bin")
            let sink = try await FileSink.create(at: destination, options: Self.noFsync)
            try await Self.write(randomBytes(count: 3000, seed: 7), to: sink)
            // Another process creates the destination while the data is being written.
            try writeFile(destination, Array("THEIRS".utf8))
            let error = try await #require(throws: FileError.self) { try await sink.commit() }
            #expect(error.code == .alreadyExists)
            await sink.abort()
            #expect(try readFile(destination) == Array("THEIRS".utf8))
            #expect(try temporaryFiles(in: directory.path).isEmpty)
        }
    }

    @Test func withOverwriteADestinationThatAppearsDuringTheWriteIsReplaced() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out.bin")
            let data = randomBytes(count: 3000, seed: 8)
            let sink = try await FileSink.create(at: destination, options: .init(replacesExisting: true, synchronizes: false))
            try await Self.write(data, to: sink)
            try writeFile(destination, Array("THEIRS".utf8))
            try await sink.commit()
            #expect(try readFile(destination) == data)
        }
    }

    @Test func waitingForAFIFOsReaderEndsOnCancellation() async throws {
        try await withScratchDirectory { directory in
            let fifo = directory.appending("fifo")
            #expect(fifo.withCString { mkfifo($0, 0o600) } == 0)
            // No reader ever comes: the open waits until the task is cancelled.
            let task = Task { try await FileSink.create(at: fifo, options: Self.noFsync) }
            task.cancel()
            await #expect(throws: CancellationError.self) { _ = try await task.value }
        }
    }


    /// The writer's `open(2)` of a FIFO waits for a reader, in the kernel: cancelling the task
    /// once that open has been called (the seam says when, so no sleep decides the order) ends
    /// the copy with `CancellationError`, every descriptor opened on the FIFO closed again (the
    /// writer's and the read end that woke it), nothing else in the directory.
    @Test(.timeLimit(.minutes(3))) func cancellingACopyToAFIFOWithNoReaderEndsIt() async throws {
        try await withScratchDirectory { directory in
            let fifo = directory.appending("fifo")
            #expect(mkfifo(fifo.description, 0o600) == 0)
            let opens = FIFOOpens(fifo)
            let copy = Task {
                let sink = try await FileSink.create(at: FileLocation(path: fifo), options: Self.noFsync, system: opens.system)
                return try await Pipeline(from: ChunkList([Chunk([1, 2, 3])]), to: sink, totalBytes: 3).run()
            }
            await opens.writerOpening.wait()
            copy.cancel()
            await #expect(throws: CancellationError.self) { _ = try await copy.value }
            let left = try entries(in: directory.path)
            #expect(opens.openDescriptors == [])
            #expect(left == ["fifo"])
        }
    }

    /// `seal()` leaves the data unnamed and hands the file over; its owner makes it durable and
    /// names it. A named temporary file closed once sealed (`closesSealedFile`) is named too.
    @Test(arguments: [false, true]) func sealHandsOverTheFileItsOwnerNames(closesSealedFile: Bool) async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out")
            var options = Self.noFsync
            options.closesSealedFile = closesSealedFile
            let sink = try await FileSink.create(at: FileLocation(path: destination), options: options)
            try await sink.write(Chunk([1, 2, 3]))
            let sealed = try #require(try await sink.seal())
            #expect((sealed.descriptor == nil) == closesSealedFile)
            #expect(try entries(in: directory.path).count == (sealed.temporary == nil ? 0 : 1))
            await sink.abort()  // the file is its owner's now: left as it is
            try sealed.makeDurable(fsyncs: false)
            try sealed.rename()
            sealed.unregister()
            #expect(try entries(in: directory.path) == ["out"])
            #expect(try readFile(destination) == [1, 2, 3])
        }
    }

    /// A destination written in place has nothing to seal: `seal()` commits it (closes it, so its
    /// reader reaches the end) and gives no file.
    @Test func sealCommitsADestinationWrittenInPlace() async throws {
        try await withScratchDirectory { directory in
            let fifo = directory.appending("fifo")
            #expect(mkfifo(fifo.description, 0o600) == 0)
            let received = BackgroundRead(fifo)
            let sink = try await FileSink.create(at: fifo, options: Self.noFsync)
            try await sink.write(Chunk([1, 2, 3]))
            #expect(try await sink.seal() == nil)
            #expect(try await received.bytes == [1, 2, 3])
            #expect(try entries(in: directory.path) == ["fifo"])
        }
    }

    @Test func writesAnUnnamedFileInTheDestinationsDirectoryUntilCommit() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out.bin")
            let data = randomBytes(count: 5000, seed: 1)
            let sink = try await FileSink.create(at: destination, options: Self.noFsync)
            try await Self.write(data, to: sink)

            // Nothing to see in the directory: the file is open, unnamed, in it.
            #expect(try entries(in: directory.path) == [])
            #expect(openDescriptors(under: directory.path).contains { $0.hasSuffix(" (deleted)") })
            try await sink.commit()
            #expect(try entries(in: directory.path) == ["out.bin"])
            #expect(try readFile(destination) == data)
            #expect(openDescriptors(under: directory.path) == [])
        }
    }

    @Test func writesANamedTemporaryFileBesideTheDestinationWhereOTmpfileIsRefused() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out.bin")
            let data = randomBytes(count: 5000, seed: 1)
            let sink = try await FileSink.create(
                at: FileLocation(path: destination), source: nil, options: Self.noFsync, system: .refusingUnnamedFiles)
            try await Self.write(data, to: sink)

            let names = try entries(in: directory.path)
            #expect(names.count == 1)
            #expect(try temporaryFiles(in: directory.path).count == 1, "only \(names)")
            #expect(names.first.map { $0.bytes.count } == ".sluice-".count + 12 + ".tmp".count)
            #expect(!exists(destination))

            try await sink.commit()
            #expect(try entries(in: directory.path) == ["out.bin"])
            #expect(try readFile(destination) == data)
        }
    }

    @Test(arguments: [true, false])
    func commitKeepsTheSourcePermissionBits(synchronizes: Bool) async throws {
        try await withScratchDirectory { directory in
            let source = directory.appending("source")
            try writeFile(source, [1], permissions: 0o640)
            let destination = directory.appending("out")
            let sink = try await FileSink.create(
                at: FileLocation(path: destination), source: try FileStatus.of(source), options: .init(synchronizes: synchronizes))
            try await sink.write(Chunk([1, 2, 3]))
            try await sink.commit()
            let status = try FileStatus.of(destination)
            #expect(status.permissions == 0o640)
            #expect(status.kind == .regular)
            #expect(try readFile(destination) == [1, 2, 3])
        }
    }

    @Test func abortLeavesNoTemporaryAndTheOldBytes() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out")
            try writeFile(destination, Array("OLD".utf8))
            let sink = try await FileSink.create(at: destination, options: Self.replacesExisting)
            try await Self.write(randomBytes(count: 3000, seed: 2), to: sink)
            await sink.abort()
            await sink.abort()  // idempotent
            #expect(try entries(in: directory.path) == ["out"])
            #expect(try readFile(destination) == Array("OLD".utf8))
        }
    }

    @Test func sinkDroppedWithoutCommitRemovesItsTemporary() async throws {
        try await withScratchDirectory { directory in
            do {
                let sink = try await FileSink.create(at: directory.appending("out"), options: Self.noFsync)
                try await sink.write(Chunk([1]))
            }
            #expect(try entries(in: directory.path) == [])
        }
    }

    // MARK: Existing destinations

    @Test func existingRegularFileIsRefusedWithoutOverwrite() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out")
            try writeFile(destination, Array("OLD".utf8))
            let error = try await #require(throws: FileError.self) {
                try await FileSink.create(at: destination)
            }
            #expect(error.code == .alreadyExists)
            #expect(error.path == destination)
            #expect(try entries(in: directory.path) == ["out"])
            #expect(try readFile(destination) == Array("OLD".utf8))
        }
    }

    @Test func existingRegularFileIsReplacedWithOverwrite() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out")
            try writeFile(destination, Array("OLD CONTENT, LONGER".utf8))
            let before = try FileStatus.of(destination)
            let sink = try await FileSink.create(at: destination, options: Self.replacesExisting)
            try await sink.write(Chunk(Array("new".utf8)))
            #expect(try readFile(destination) == Array("OLD CONTENT, LONGER".utf8), "untouched until commit")
            try await sink.commit()
            #expect(try readFile(destination) == Array("new".utf8))
            #expect(try FileStatus.of(destination).inode != before.inode, "replaced, not rewritten")
            #expect(try entries(in: directory.path) == ["out"])
        }
    }

    @Test func symlinkDestinationIsReplacedAndItsTargetUntouched() async throws {
        try await withScratchDirectory { directory in
            let target = directory.appending("target")
            try writeFile(target, Array("TARGET".utf8))
            let link = directory.appending("link")
            #expect(symlink("target", link.description) == 0)

            await #expect(throws: FileError.self) { try await FileSink.create(at: link) }

            let sink = try await FileSink.create(at: link, options: Self.replacesExisting)
            try await sink.write(Chunk(Array("new".utf8)))
            try await sink.commit()
            #expect(try FileStatus.of(link, followsLinks: false).kind == .regular)
            #expect(try readFile(link) == Array("new".utf8))
            #expect(try readFile(target) == Array("TARGET".utf8))
        }
    }

    @Test func danglingSymlinkIsRefusedAndItsTargetNeverCreated() async throws {
        try await withScratchDirectory { directory in
            let link = directory.appending("link")
            #expect(symlink("nowhere", link.description) == 0)
            let error = try await #require(throws: FileError.self) {
                try await FileSink.create(at: link)
            }
            #expect(error.code == .alreadyExists)
            #expect(!exists(directory.appending("nowhere")))
            #expect(try entries(in: directory.path) == ["link"])
            #expect(try FileStatus.of(link, followsLinks: false).kind == .symbolicLink)
        }
    }

    @Test func danglingSymlinkIsReplacedWithOverwrite() async throws {
        try await withScratchDirectory { directory in
            let link = directory.appending("link")
            #expect(symlink("nowhere", link.description) == 0)
            let sink = try await FileSink.create(at: link, options: Self.replacesExisting)
            try await sink.write(Chunk([7]))
            try await sink.commit()
            #expect(!exists(directory.appending("nowhere")))
            #expect(try FileStatus.of(link, followsLinks: false).kind == .regular)
        }
    }

    // MARK: Same file (C11)

    enum Alias: String, CaseIterable, Sendable {
        case samePath, symlink, hardLink, relativeSymlinkInSubdirectory
    }

    @Test(arguments: Alias.allCases, [false, true])
    func sameFileIsRefused(alias: Alias, replacesExisting: Bool) async throws {
        try await withScratchDirectory { directory in
            let file = directory.appending("f.txt")
            try writeFile(file, Array("ORIGINAL".utf8))
            let destination: Pathname
            switch alias {
            case .samePath:
                destination = file
            case .symlink:
                destination = directory.appending("link")
                #expect(symlink("f.txt", destination.description) == 0)
            case .hardLink:
                destination = directory.appending("hard")
                #expect(link(file.description, destination.description) == 0)
            case .relativeSymlinkInSubdirectory:
                let subdirectory = directory.appending("d")
                #expect(mkdir(subdirectory.description, 0o755) == 0)
                destination = subdirectory.appending("f.txt")
                #expect(symlink("../f.txt", destination.description) == 0)
            }
            let before = try entries(in: directory.path)

            let error = try await #require(throws: FileError.self) {
                try await FileSink.create(
                    at: FileLocation(path: destination), source: try FileStatus.of(file), options: .init(replacesExisting: replacesExisting))
            }
            #expect(error.code == .sameFile)
            #expect(try readFile(file) == Array("ORIGINAL".utf8))
            #expect(try entries(in: directory.path) == before, "nothing created or removed")
            if alias == .hardLink {
                #expect(try FileStatus.of(file).linkCount == 2)
            }
        }
    }

    @Test func directoryDestinationIsRefused() async throws {
        try await withScratchDirectory { directory in
            let error = try await #require(throws: FileError.self) {
                try await FileSink.create(at: directory.path, options: Self.replacesExisting)
            }
            #expect(error.code == .isDirectory)
            #expect(try entries(in: directory.path) == [])
        }
    }

    // MARK: Destinations that are not regular files (C22)

    @Test func devNullIsWrittenInPlace() async throws {
        let devBefore = try temporaryFiles(in: "/dev")
        for overwrite in [false, true] {
            let sink = try await FileSink.create(at: "/dev/null", options: .init(replacesExisting: overwrite))
            try await Self.write(randomBytes(count: 10_000, seed: 3), to: sink)
            #expect(try temporaryFiles(in: "/dev") == devBefore, "no temporary file in /dev")
            try await sink.commit()
        }
        #expect(try FileStatus.of("/dev/null").kind == .characterDevice)
        #expect(try temporaryFiles(in: "/dev") == devBefore)
    }

    @Test func fifoWithAReaderIsWrittenInPlace() async throws {
        try await withScratchDirectory { directory in
            let fifo = directory.appending("fifo")
            #expect(mkfifo(fifo.description, 0o600) == 0)
            let data = randomBytes(count: 200_000, seed: 4)
            let received = BackgroundRead(fifo)

            let sink = try await FileSink.create(at: fifo, options: Self.replacesExisting)
            // More than the FIFO holds (64 KiB), in a few writes: each is a hop to the sink's
            // thread and back, which waits for a pool thread when the whole suite runs.
            try await Self.write(data, to: sink, chunkSize: 16 << 10)
            #expect(try temporaryFiles(in: directory.path) == [])
            try await sink.commit()

            #expect(try await received.bytes == data)
            #expect(try FileStatus.of(fifo).kind == .fifo)
            #expect(try entries(in: directory.path) == ["fifo"])
        }
    }

    // MARK: Names, attributes, errors

    @Test func longestDestinationNameWorks() async throws {
        try await withScratchDirectory { directory in
            let name = Pathname(String(repeating: "n", count: 255))
            let destination = directory.appending(name)
            let sink = try await FileSink.create(at: destination, options: Self.noFsync)
            try await sink.write(Chunk([1, 2]))
            try await sink.commit()
            #expect(try entries(in: directory.path) == [name])
            #expect(try readFile(destination) == [1, 2])
        }
    }

    @Test func preserveAttributesKeepsTheModificationTime() async throws {
        try await withScratchDirectory { directory in
            let source = directory.appending("source")
            try writeFile(source, [1], permissions: 0o604)
            var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 123_456_789),
                         timespec(tv_sec: 1_100_000_000, tv_nsec: 987_654_321)]
            #expect(utimensat(AT_FDCWD, source.description, &times, 0) == 0)
            let status = try FileStatus.of(source)

            let destination = directory.appending("out")
            let sink = try await FileSink.create(
                at: FileLocation(path: destination), source: status, options: .init(synchronizes: false, preservesAttributes: true))
            try await sink.write(Chunk([1]))
            try await sink.commit()
            let copied = try FileStatus.of(destination)
            #expect(copied.modificationTime == status.modificationTime)
            #expect(copied.modificationTime.seconds == 1_100_000_000)
            #expect(copied.accessTime.seconds == 1_000_000_000)
            #expect(copied.permissions == 0o604)
        }
    }

    @Test func injectedWriteFailureSurfacesWithItsErrno() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out")
            try writeFile(destination, Array("OLD".utf8))
            let system = SystemCalls(
                read: SystemCalls.live.read, write: { _, _, _ in .failure(.fileTooLarge) },
                fsync: SystemCalls.live.fsync)
            let sink = try await FileSink.create(at: FileLocation(path: destination), source: nil, options: Self.replacesExisting, system: system)
            let error = try await #require(throws: FileError.self) {
                try await sink.write(Chunk([1, 2, 3]))
            }
            #expect(error.errno == .fileTooLarge)
            #expect(error.code == .noSpace)
            #expect(error.operation == .write)
            #expect(error.path == destination)
            #expect(error.description == "cannot write to '\(destination)': File too large")
            await sink.abort()
            #expect(try entries(in: directory.path) == ["out"])
            #expect(try readFile(destination) == Array("OLD".utf8))
        }
    }

    @Test func failingFsyncFailsTheCommitAndAbortCleansUp() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("out")
            let system = SystemCalls(
                read: SystemCalls.live.read, write: SystemCalls.live.write, fsync: { _ in .failure(.ioError) })
            let sink = try await FileSink.create(at: FileLocation(path: destination), source: nil, options: .init(), system: system)
            try await sink.write(Chunk([1]))
            let error = try await #require(throws: FileError.self) { try await sink.commit() }
            #expect(error.operation == .fsync)
            #expect(error.errno == .ioError)
            await sink.abort()
            #expect(try entries(in: directory.path) == [])
        }
    }
}
