#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
import Testing
@testable import Sluice
import SluiceTestSupport

/// ``RegularFileCopy`` on each path: the table's choice on this machine's file system, and
/// the clone and kernel-copy paths and their fallbacks through a scripted system-call seam
/// (the file system reported as XFS, the kernel's answers injected). Each test names the path
/// it runs on.
@Suite(.timeLimit(.minutes(3)))
struct RegularFileCopyTests {
    static let size = 3 * (1 << 20) + 123

    /// Copies `data` from `source` in `directory` to `copy` with `calls`; returns the report
    /// and every progress snapshot seen.
    static func copy(
        _ data: [UInt8], in directory: ScratchDirectory, calls: KernelCalls = KernelCalls(),
        options: RegularFileCopy.Options = .init(sliceSize: 1 << 20), sinkOptions: FileSink.Options = .init()
    ) async throws -> (CopyReport, [ProgressSnapshot]) {
        let sourcePath = directory.appending("source")
        try writeFile(sourcePath, data)
        let source = try await FileChunks.open(
            sourcePath, descriptor: nil, ownsDescriptor: true, chunkSize: 1 << 20, system: calls.system)
        let sink = try await FileSink.create(
            at: FileLocation(path: directory.appending("copy")), source: source.status, options: sinkOptions, system: calls.system)
        let copy = RegularFileCopy(from: source, to: sink, options: options)
        let updates = copy.progress.subscribe()
        let seen = Task {
            var seen: [ProgressSnapshot] = []
            for await snapshot in updates { seen.append(snapshot) }
            return seen
        }
        do {
            let report = try await copy.run()
            return (report, await seen.value)
        } catch {
            _ = await seen.value
            throw error
        }
    }

    static func expectComplete(_ seen: [ProgressSnapshot], size: Int) throws {
        let last = try #require(seen.last)
        #expect(last.isFinal)
        #expect(last.fraction == 1.0)
        #expect(last.bytesCompleted == Int64(size))
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.bytesCompleted <= $1.bytesCompleted })
    }

    // MARK: The table on this machine

    /// The scratch directory's file system, and the path the table gives a dense file there.
    static func tablePath(in directory: ScratchDirectory) throws -> (FileSystemType, CopyMethod) {
        let type = try directory.fileSystemType()
        try #require(!CopyMethod.cloningFileSystems.contains(type), "this test needs a file system that does not clone")
        return (type, CopyMethod.kernelCopyFileSystems.contains(type) ? .kernelCopy : .pipeline)
    }

    /// ext4 and tmpfs copy in the kernel, with no CRC-32 (the data never passed through
    /// Sluice); a file system not in the table takes the pipeline and has one.
    @Test func theTablesPathOnThisMachine() async throws {
        try await withScratchDirectory { directory in
            let (type, expected) = try Self.tablePath(in: directory)
            let data = randomBytes(count: Self.size, seed: 15)
            let (report, seen) = try await Self.copy(data, in: directory)
            #expect(report.method == expected, "on \(type)")
            #expect(report.refusals.isEmpty)
            #expect(report.crc32 == (expected == .pipeline ? CRC32(data).value : nil))
            #expect(try readFile(directory.appending("copy")) == data)
            try Self.expectComplete(seen, size: Self.size)
        }
    }

    /// A verified copy of a dense file on ext4 or tmpfs reads the data once, by the pipeline,
    /// and checks the output against the CRC-32 of what it read.
    @Test(.enabled(if: ScratchDirectory.isOnExt4OrTmpfs, "the temporary directory is not on ext4 or tmpfs"))
    func aVerifiedCopyTakesThePipelineOnExt4AndTmpfs() async throws {
        try await withScratchDirectory { directory in
            let (_, expected) = try Self.tablePath(in: directory)
            #expect(expected == .kernelCopy)
            let data = randomBytes(count: Self.size, seed: 16)
            var options = RegularFileCopy.Options(sliceSize: 1 << 20)
            options.pipeline.verifiesOutput = true
            let (report, _) = try await Self.copy(data, in: directory, options: options)
            #expect(report.method == .pipeline)
            #expect(report.crc32 == CRC32(data).value)
            #expect(report.verification != nil)
            #expect(try readFile(directory.appending("copy")) == data)
        }
    }

    // MARK: Kernel copy (the file system reported as XFS, the clone refused)

    @Test func kernelCopyInSlicesWithProgress() async throws {
        try await withScratchDirectory { directory in
            let data = randomBytes(count: Self.size, seed: 15)
            let calls = KernelCalls(fileSystem: .xfs, clone: .notSupported)
            let (report, seen) = try await Self.copy(data, in: directory, calls: calls)
            #expect(report.method == .kernelCopy)
            #expect(report.refusals == [CopyMethod.Refusal(method: .clone, errno: .notSupported)])
            #expect(report.crc32 == nil)
            #expect(report.bytesRead == Int64(Self.size))
            // Four slices, then the call at the end of file that returns 0.
            #expect(calls.counts.copies == 5)
            // The refused clone wrote nothing: no ftruncate (XFS writes back a truncated file at its close).
            #expect(calls.truncates == 0)
            // Durable: the write-back of each slice starts as it is copied.
            #expect(calls.writeBacks == 4)
            #expect(try readFile(directory.appending("copy")) == data)
            #expect(try temporaryFiles(in: directory.path) == [])
            try Self.expectComplete(seen, size: Self.size)
        }
    }

    /// `--no-fsync`: nothing is pushed to the disk early either.
    @Test func kernelCopyWithoutFsyncStartsNoWriteBack() async throws {
        try await withScratchDirectory { directory in
            let data = randomBytes(count: Self.size, seed: 17)
            let calls = KernelCalls(fileSystem: .xfs, clone: .notSupported)
            var sinkOptions = FileSink.Options()
            sinkOptions.synchronizes = false
            let (report, _) = try await Self.copy(data, in: directory, calls: calls, sinkOptions: sinkOptions)
            #expect(report.method == .kernelCopy)
            #expect(calls.counts.copies == 5, "four slices, then the end of file")
            #expect(calls.writeBacks == 0)
            #expect(try readFile(directory.appending("copy")) == data)
        }
    }

    @Test(arguments: [
        ErrorNumber.improperLink, .notSupported, .invalidArgument, .noFunction, .inappropriateIOCTLForDevice, .notPermitted,
    ])
    func kernelCopyGivesWayToThePipeline(errno: ErrorNumber) async throws {
        try await withScratchDirectory { directory in
            let data = randomBytes(count: Self.size, seed: 15)
            // The second slice fails: what the first copied is discarded.
            let calls = KernelCalls(fileSystem: .xfs, clone: errno, copy: { $0 == 2 ? .failure(errno) : .real })
            let (report, seen) = try await Self.copy(data, in: directory, calls: calls)
            #expect(report.method == .pipeline)
            #expect(report.refusals == [.init(method: .clone, errno: errno), .init(method: .kernelCopy, errno: errno)])
            #expect(calls.truncates == 1, "what the first slice copied is cut off")
            #expect(report.crc32 == CRC32(data).value)
            #expect(try readFile(directory.appending("copy")) == data)
            #expect(try temporaryFiles(in: directory.path) == [])
            #expect(try #require(seen.last).bytesCompleted == Int64(Self.size))
        }
    }

    @Test(arguments: [1, 2])
    func kernelCopyThatCopiesNothingBeforeTheSizeGivesWay(call: Int) async throws {
        try await withScratchDirectory { directory in
            let data = randomBytes(count: Self.size, seed: 15)
            let calls = KernelCalls(fileSystem: .xfs, clone: .improperLink, copy: { $0 == call ? .nothing : .real })
            let (report, _) = try await Self.copy(data, in: directory, calls: calls)
            #expect(report.method == .pipeline)
            #expect(report.refusals.last == CopyMethod.Refusal(method: .kernelCopy, errno: nil))
            #expect(try readFile(directory.appending("copy")) == data)
        }
    }

    /// A file that grows after its `fstat(2)` is copied to its end of file, as the pipeline
    /// reads it and `cp` copies it.
    @Test func kernelCopyCopiesAFileThatGrewToItsEnd() async throws {
        try await withScratchDirectory { directory in
            let data = randomBytes(count: Self.size, seed: 18)
            let more = randomBytes(count: 10_000, seed: 19)
            let sourcePath = directory.appending("source")
            let calls = KernelCalls(fileSystem: .xfs, clone: .notSupported, afterCopy: { call in
                guard call == 1 else { return }
                let descriptor = open(sourcePath.description, O_WRONLY | O_APPEND)
                more.withUnsafeBytes { _ = write(descriptor, $0.baseAddress, $0.count) }
                close(descriptor)
            })
            let (report, _) = try await Self.copy(data, in: directory, calls: calls)
            #expect(report.method == .kernelCopy)
            #expect(report.bytesWritten == Int64(data.count + more.count))
            #expect(try readFile(directory.appending("copy")) == data + more)
        }
    }

    @Test func kernelCopyErrorFailsTheCopyAndLeavesNothing() async throws {
        try await withScratchDirectory { directory in
            let calls = KernelCalls(fileSystem: .xfs, clone: .notSupported, copy: { $0 == 2 ? .failure(.ioError) : .real })
            let error = try await #require(throws: FileError.self) {
                try await Self.copy(randomBytes(count: Self.size, seed: 15), in: directory, calls: calls)
            }
            #expect(error.operation == .copyFileRange)
            #expect(error.errno == .ioError)
            #expect(!exists(directory.appending("copy")))
            #expect(try temporaryFiles(in: directory.path) == [])
        }
    }

    @Test func cancellationBetweenSlicesLeavesNothing() async throws {
        try await withScratchDirectory { directory in
            // The first slice waits, on the sink's thread, until the task is cancelled.
            let started = Latch()
            let cancelled = DispatchSemaphore(value: 0)
            let calls = KernelCalls(fileSystem: .xfs, clone: .notSupported, afterCopy: {
                if $0 == 1 {
                    started.open()
                    cancelled.wait()
                }
            })
            let task = Task { try await Self.copy(randomBytes(count: Self.size, seed: 15), in: directory, calls: calls) }
            await started.wait()
            task.cancel()
            cancelled.signal()
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(!exists(directory.appending("copy")))
            let leftovers = try temporaryFiles(in: directory.path)
            #expect(leftovers.isEmpty)
        }
    }

    // MARK: Clone

    @Test func reflinkAlwaysWhereNoCloneIsPossibleFailsAndLeavesNothing() async throws {
        try await withScratchDirectory { directory in
            let error = try await #require(throws: FileError.self) {
                try await Self.copy(randomBytes(count: 4096, seed: 15), in: directory, calls: KernelCalls(fileSystem: .ext4), options: .init(reflink: .always))
            }
            #expect(error.code == .unsupported)
            #expect(error.operation == .clone)
            #expect(!exists(directory.appending("copy")))
            #expect(try temporaryFiles(in: directory.path) == [])
        }
    }

    @Test func reflinkAlwaysWhenTheKernelRefusesFailsAndLeavesNothing() async throws {
        try await withScratchDirectory { directory in
            let calls = KernelCalls(fileSystem: .xfs, clone: .improperLink)
            let error = try await #require(throws: FileError.self) {
                try await Self.copy(randomBytes(count: 4096, seed: 15), in: directory, calls: calls, options: .init(reflink: .always))
            }
            #expect(error.operation == .clone)
            #expect(error.errno == .improperLink)
            #expect(calls.counts.copies == 0)
            #expect(!exists(directory.appending("copy")))
        }
    }

    @Test func forcedPipelineMakesNoKernelCall() async throws {
        try await withScratchDirectory { directory in
            let calls = KernelCalls(fileSystem: .xfs)
            let data = randomBytes(count: 100_000, seed: 15)
            let (report, _) = try await Self.copy(data, in: directory, calls: calls, options: .init(forcesPipeline: true))
            #expect(report.method == .pipeline)
            #expect(calls.counts.clones == 0 && calls.counts.copies == 0)
            #expect(try readFile(directory.appending("copy")) == data)
        }
    }

    // MARK: C13 on every path

    @Test(
        .enabled(if: exists("/sys/class/net/lo/address"), "this machine has no /sys/class/net/lo"),
        arguments: [KernelCalls.Answer.real, .nothing])
    func sysfsFileIsCopiedWholeWhateverTheKernelSays(answer: KernelCalls.Answer) async throws {
        try await withScratchDirectory { directory in
            let calls = KernelCalls(fileSystem: .xfs, clone: .improperLink, copy: { _ in answer })
            let source = try await FileChunks.open(
                "/sys/class/net/lo/address", descriptor: nil, ownsDescriptor: true, chunkSize: 4096, system: calls.system)
            let sink = try await FileSink.create(
                at: FileLocation(path: directory.appending("copy")), source: source.status, options: .init(), system: calls.system)
            let report = try await RegularFileCopy(from: source, to: sink).run()
            #expect(report.method == .pipeline)
            #expect(try readFile(directory.appending("copy")) == Array("00:00:00:00:00:00\n".utf8))
        }
    }

    @Test func procFileWithSizeZeroIsCopiedWhole() async throws {
        try await withScratchDirectory { directory in
            let calls = KernelCalls(fileSystem: .xfs)
            let source = try await FileChunks.open(
                "/proc/version", descriptor: nil, ownsDescriptor: true, chunkSize: 4096, system: calls.system)
            let sink = try await FileSink.create(
                at: FileLocation(path: directory.appending("copy")), source: source.status, options: .init(), system: calls.system)
            let report = try await RegularFileCopy(from: source, to: sink).run()
            #expect(report.method == .pipeline)
            #expect(try readFile(directory.appending("copy")) == (try readFile("/proc/version")))
        }
    }
}
