#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Sluice
import SluiceTestSupport

/// Faults at every point: a copy, a compress and a decompress, each file to file, pipe to file
/// and file to standard output (a pipe), run once per (system call, fault) through the seam.
///
/// A counting run learns how many calls of each kind (``SystemCallKind``) the operation makes;
/// then, for every call `n` of every kind and every fault that call can meet by its man page,
/// the operation runs again with that one call faulted:
/// - `open`: `ENOSPC`, `EINTR`; `read`: `EIO`, `EINTR`, short; `write`: `EIO`, `ENOSPC`,
///   `EINTR`, short; `fsync`: `EIO`, `ENOSPC`, `EINTR` (not in `fsync(2)`'s list, but NFS and
///   FUSE report it); `close`: `EIO`, `ENOSPC`, `EINTR`; `rename`: `ENOSPC` (`EINTR` is not
///   among `rename(2)`'s errors, and a rename retried after one could find its source gone);
/// - `EAGAIN` where it applies: only a descriptor in non-blocking mode answers it, and the only
///   such descriptors on these paths are a caller's (a standard input or output that another
///   process set `O_NONBLOCK` on): the pipe read in "pipe to file" and the pipe written in
///   "file to standard output", which those runs put in non-blocking mode. Sluice opens its own
///   files blocking (a source's `O_NONBLOCK` is cleared right after `open`).
///
/// Each run must end complete and identical (`EINTR`, short transfers, `EAGAIN`; and the faults
/// Sluice rightly shrugs off: a `close` of the read-only source or of the directory, and an
/// `open` or `fsync` of the directory after the rename, which is a warning naming the
/// destination), or failed with a ``FileError`` whose operation is the faulted call's and whose
/// message names its path; the destination untouched (old bytes, or still absent), no
/// temporary file left, no descriptor left open on the scratch directory, and then the same
/// operation without faults must succeed.
///
/// Descriptors: other suites run at the same time and open their own, so a count of the
/// process's descriptors would only hold with a tolerance. Each run instead checks exactly the
/// descriptors that are its own: those open below this sweep's scratch directory (the source,
/// the temporary file, the directory: none may be left), and the reader's wake-up pipe, the one
/// pipe Sluice makes for itself, whose owner must be gone (its `deinit` closes both ends). The
/// test's pipes are the test's to close. The sinks of a sweep share one ``CommitGate``, as the
/// files of one `sluice` process do, and none may stay registered there after its run.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct PipelineFaultSweepTests {
    enum Operation: String, CaseIterable, Sendable {
        case copy, compress, decompress
    }

    enum Shape: String, CaseIterable, Sendable {
        case fileToFile = "file to file"
        case pipeToFile = "pipe to file"
        case fileToStandardOutput = "file to standard output"
    }

    static let chunkSize = 8192
    /// Five full chunks and a short one; input and output fit in a pipe's 64 KiB buffer.
    static let data = randomBytes(count: 5 * chunkSize + 123, seed: 0xFA_0175)
    static let oldBytes = Array("OLD".utf8)

    @Test(arguments: Operation.allCases, Shape.allCases)
    func everyFaultAtEveryCallEndsCompleteOrCleanlyFailed(operation: Operation, shape: Shape) async throws {
        try await withScratchDirectory { directory in
            let fixture = try await Fixture(operation: operation, shape: shape, directory: directory)
            let counting = FaultInjector()
            let reference = try await fixture.run(counting)
            _ = try reference.result.get()
            let referenceOutput = try #require(reference.output)
            #expect(try await fixture.decoded(referenceOutput) == Self.data)
            let counts = counting.counts

            let points = Self.points(counts: counts, shape: shape)
            let start = ContinuousClock.now
            var failures = 0
            for point in points {
                let injector = FaultInjector(injecting: point)
                let run = try await fixture.run(injector, nonBlocking: point.fault == .wouldBlock)
                #expect(injector.target != nil, "\(point) was never reached")
                let failed = try await fixture.check(run, point: point, target: injector.target, reference: referenceOutput)
                #expect(openDescriptors(under: directory.path) == [], "\(point): descriptors left open")
                #expect(!run.wakePipeIsOpen, "\(point): the reader's wake-up pipe is still open")
                #expect(fixture.gate.registeredFileCount == 0, "\(point): a file still registered at the commit gate")
                if failed {
                    failures += 1
                    let next = try await fixture.run(FaultInjector())
                    if case .failure(let error) = next.result { Issue.record("\(point): the next run failed: \(error)") }
                    #expect(try await fixture.decoded(next.output ?? []) == Self.data, "\(point): the next run")
                }
            }
            let calls = SystemCallKind.allCases.map { "\($0) \(counts[$0] ?? 0)" }.joined(separator: ", ")
            print(
                "fault sweep: \(operation) \(shape.rawValue): \(points.count) points (\(failures) failed cleanly) over calls \(calls); \(ContinuousClock.now - start)"
            )
        }
    }

    /// Every (call, fault) pair of a sweep, from the counts of a run without faults.
    static func points(counts: [SystemCallKind: Int], shape: Shape) -> [FaultPoint] {
        SystemCallKind.allCases.flatMap { kind in
            let faults = faults(for: kind, shape: shape)
            return (0..<(counts[kind] ?? 0)).flatMap { offset in
                faults.map { FaultPoint(kind: kind, index: offset + 1, fault: $0) }
            }
        }
    }

    /// The faults a call of `kind` can meet, by its man page; `EAGAIN` only on the shape's
    /// non-blocking pipe.
    static func faults(for kind: SystemCallKind, shape: Shape) -> [InjectedFault] {
        switch kind {
        case .open: [.failure(.noSpace), .interrupted]
        case .read: [.failure(.ioError), .interrupted, .shortTransfer] + (shape == .pipeToFile ? [.wouldBlock] : [])
        case .write:
            [.failure(.ioError), .failure(.noSpace), .interrupted, .shortTransfer]
                + (shape == .fileToStandardOutput ? [.wouldBlock] : [])
        case .fsync: [.failure(.ioError), .failure(.noSpace), .interrupted]
        case .close: [.failure(.ioError), .failure(.noSpace), .interrupted]
        case .rename, .link: [.failure(.noSpace)]
        }
    }

    /// The outcome of one run: what it returned or threw, what the destination holds
    /// afterwards (`nil`: no file there), and the warnings of a file sink's commit.
    struct Run {
        var result: Result<CopyReport, any Error>
        var output: [UInt8]?
        var warnings: [StageWarning] = []
        /// Whether the source's wake-up pipe (see ``WakePipe``) outlived the run.
        var wakePipeIsOpen = false
    }

    /// A reference that does not keep its object alive.
    final class WeakReference<Object: AnyObject> {
        weak var object: Object?
    }

    /// One operation in one shape over its own files.
    struct Fixture {
        let operation: Operation
        let shape: Shape
        let directory: ScratchDirectory
        let input: Pathname
        let destination: Pathname
        let inputBytes: [UInt8]
        let gate = CommitGate()

        init(operation: Operation, shape: Shape, directory: ScratchDirectory) async throws {
            self.operation = operation
            self.shape = shape
            self.directory = directory
            input = directory.appending("input")
            destination = directory.appending("output")
            inputBytes = operation == .decompress ? try await gzipped(PipelineFaultSweepTests.data) : PipelineFaultSweepTests.data
            if shape != .pipeToFile { try writeFile(input, inputBytes) }
        }

        var transform: (@Sendable () throws -> any ChunkTransform)? {
            switch operation {
            case .copy: nil
            case .compress: { try GzipEncoder(level: .default, outputChunkSize: PipelineFaultSweepTests.chunkSize) }
            case .decompress: { GzipDecoder(outputChunkSize: PipelineFaultSweepTests.chunkSize) }
            }
        }

        /// What the destination held before each run: old bytes for a copy (replaced with
        /// `overwrite`), nothing for compress and decompress (created with `RENAME_NOREPLACE`).
        var untouched: [UInt8]? { operation == .copy ? PipelineFaultSweepTests.oldBytes : nil }

        /// The uncompressed data an output stands for.
        func decoded(_ output: [UInt8]) async throws -> [UInt8] {
            operation == .compress ? try await drive(GzipDecoder(), output, chunkSize: 4096).output : output
        }

        /// Runs the operation once with `injector`'s system calls. `nonBlocking` puts the pipe
        /// Sluice reads or writes in non-blocking mode.
        func run(_ injector: FaultInjector, nonBlocking: Bool = false) async throws -> Run {
            let wakePipe = WeakReference<WakePipe>()
            var run = try await run(injector.system, nonBlocking: nonBlocking, watching: wakePipe)
            run.wakePipeIsOpen = wakePipe.object != nil
            return run
        }

        private func run(
            _ system: SystemCalls, nonBlocking: Bool, watching wakePipe: WeakReference<WakePipe>
        ) async throws -> Run {
            if shape != .fileToStandardOutput {
                if let untouched { try writeFile(destination, untouched) } else { _ = destination.withCString { unlink($0) } }
            }
            switch shape {
            case .fileToFile:
                return try await runToFile(reading: nil, system, watching: wakePipe)
            case .pipeToFile:
                let pipe = try makeTestPipe(sluiceReads: true, nonBlocking: nonBlocking)
                defer { try? pipe.read.close() }
                try inputBytes.withUnsafeBytes { try pipe.write.write(contentsOf: $0) }
                try pipe.write.close()
                return try await runToFile(reading: pipe.read, system, watching: wakePipe)
            case .fileToStandardOutput:
                let pipe = try makeTestPipe(sluiceReads: false, nonBlocking: nonBlocking)
                defer { try? pipe.read.close() }
                let result = await Result {
                    try await perform(
                        openSource(nil, system, watching: wakePipe), DescriptorSink(pipe.write, path: "-", system: system))
                }
                try pipe.write.close()
                return Run(result: result, output: try await drain(pipe.read))
            }
        }

        /// What is left in a pipe whose write end this process has closed, read to its end on a
        /// thread of its own (``FileChunks``, through the real calls): a child that another suite
        /// is spawning can hold a copy of the write end until its `exec`, and the read waits for
        /// it in `poll(2)`, off the cooperative pool.
        private func drain(_ descriptor: Descriptor) async throws -> [UInt8] {
            var bytes: [UInt8] = []
            for try await chunk in try await FileChunks.reading(descriptor, chunkSize: 64 * 1024) { bytes += chunk.bytes }
            return bytes
        }

        /// Runs the operation into ``destination`` from ``input``, or from `descriptor` when given.
        private func runToFile(
            reading descriptor: Descriptor?, _ system: SystemCalls, watching wakePipe: WeakReference<WakePipe>
        ) async throws -> Run {
            var sink: FileSink?
            let result = await Result {
                let source = try await openSource(descriptor, system, watching: wakePipe)
                sink = try await FileSink.create(
                    at: FileLocation(path: destination), source: source.status, options: .init(replacesExisting: operation == .copy),
                    system: system, gate: gate)
                return try await perform(source, sink!)
            }
            return Run(
                result: result, output: exists(destination) ? try readFile(destination) : nil,
                warnings: await sink?.warnings ?? [])
        }

        /// ``input``, or `descriptor` (named `-`, not closed) when given.
        private func openSource(
            _ descriptor: Descriptor?, _ system: SystemCalls, watching wakePipe: WeakReference<WakePipe>
        ) async throws -> FileChunks {
            let source = try await FileChunks.open(
                descriptor == nil ? input : "-", descriptor: descriptor, ownsDescriptor: descriptor == nil,
                chunkSize: PipelineFaultSweepTests.chunkSize, system: system)
            wakePipe.object = source.reader.wake.withLock { $0.pipe }
            return source
        }

        private func perform<Sink: ChunkSink>(_ source: FileChunks, _ sink: Sink) async throws -> CopyReport {
            try await Pipeline(
                from: source, to: sink, totalBytes: source.expectedSize, options: .init(capacity: 2), transform: transform
            ).run()
        }

        /// Checks a faulted run against the rules of the suite.
        ///
        /// - Returns: whether the run failed.
        func check(_ run: Run, point: FaultPoint, target: String?, reference: [UInt8]) async throws -> Bool {
            #expect(try temporaryFiles(in: directory.path) == [], "\(point): temporary file left")
            switch run.result {
            case .success(let report):
                let warnings = report.warnings + run.warnings
                let mayEndWell = point.fault.isTransient || isShrugged(point, target: target)
                #expect(mayEndWell, "\(point) on \(target ?? "?"): completed")
                #expect(try await decoded(run.output ?? []) == PipelineFaultSweepTests.data, "\(point): output differs")
                if point.fault.isTransient || point.kind == .close {
                    #expect(warnings.isEmpty, "\(point): \(warnings)")
                } else if mayEndWell {
                    #expect(warnings.contains { $0.message.contains("'\(destination)'") }, "\(point): \(warnings)")
                }
                return false
            case .failure(let error):
                #expect(!point.fault.isTransient, "\(point): \(error)")
                let fileError = try #require(error as? FileError, "\(point): \(type(of: error)): \(error)")
                if case .failure(let errno) = point.fault { #expect(fileError.errno == errno, "\(point): \(fileError)") }
                #expect(operations(for: point.kind).contains(fileError.operation.description), "\(point): \(fileError)")
                let path = try #require(fileError.path, "\(point): \(fileError)")
                #expect([input, destination, "-"].contains(path), "\(point): \(fileError)")
                // `-` is named as cp and cat name it.
                let named = switch (path, fileError.operation) {
                case ("-", .read): "standard input"
                case ("-", .write): "standard output"
                default: "'\(path)'"
                }
                #expect(fileError.description.contains(named), "\(point): \(fileError)")
                if shape == .fileToStandardOutput {
                    let written = run.output ?? []
                    #expect(reference.starts(with: written), "\(point): standard output is not a prefix of the output")
                } else {
                    #expect(run.output == untouched, "\(point): destination touched")
                }
                return true
            }
        }

        /// A fault Sluice rightly ignores: a `close` of the read-only source or of the
        /// directory, or a failure to sync the directory after the rename (a warning).
        private func isShrugged(_ point: FaultPoint, target: String?) -> Bool {
            let directoryPath = directory.path.description
            switch point.kind {
            case .close: return target == input.description || target == directoryPath
            case .open, .fsync: return target == directoryPath
            default: return false
            }
        }

        private func operations(for kind: SystemCallKind) -> [String] {
            switch kind {
            case .open: ["open", "create"]
            // Naming an unnamed file: `create` for a new name, `rename` ("replace") for an old one.
            case .link: ["create", "rename"]
            default: [kind.rawValue]
            }
        }
    }
}

/// A pipe whose end the test uses never blocks (`O_NONBLOCK`: a mistake shows as `EAGAIN`, not
/// a hang); the end Sluice uses (`read` or not) is in non-blocking mode only if `nonBlocking`.
func makeTestPipe(sluiceReads: Bool, nonBlocking: Bool) throws -> (read: Descriptor, write: Descriptor) {
    let pipe = try makePipe()
    let (sluiceEnd, testEnd) = sluiceReads ? (pipe.read, pipe.write) : (pipe.write, pipe.read)
    for descriptor in nonBlocking ? [sluiceEnd, testEnd] : [testEnd] {
        _ = fcntl(descriptor.rawValue, F_SETFL, fcntl(descriptor.rawValue, F_GETFL) | O_NONBLOCK)
    }
    return pipe
}
