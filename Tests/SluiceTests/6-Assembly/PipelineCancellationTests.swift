import Foundation
import Testing
@testable import Sluice
import SluiceTestSupport

/// Cancellation at every await point of the pipeline: a copy, a compress and a decompress, each
/// from a file to a file, from a pipe to a file and from a file to a descriptor (standard
/// output's shape). A clean run lists the points through ``Pipeline/awaitPointHook``; then, for
/// each point, a new run cancels its own task exactly there (from the hook, in the stage that
/// reached it: an event, not a time) and must end with `CancellationError`, having committed
/// nothing and left nothing behind: no temporary file, no descriptor, no stage still running.
@Suite(.timeLimit(.minutes(4)))
struct PipelineCancellationTests {
    enum Operation: String, CaseIterable, CustomStringConvertible {
        case copy, compress, parallelCompress, decompress
        var description: String { rawValue }
    }

    enum Shape: String, CaseIterable, CustomStringConvertible {
        case fileToFile, pipeToFile, fileToStandardOutput
        var description: String { rawValue }
    }

    static let chunkSize = 4096
    /// Four chunks of input: three full, one short. Writes of at most `PIPE_BUF` bytes are
    /// atomic and each read asks for one chunk, so a pipe delivers the same four chunks as the
    /// file: the points do not depend on timing.
    static let data = randomBytes(count: 3 * chunkSize, seed: 3) + [UInt8](repeating: 7, count: 100)
    /// Two blocks of the parallel encoder on two threads (a full one, held until more input
    /// shows it is not the last, and a short one): eleven chunks, still within a pipe's buffer.
    static let blocks = randomBytes(count: ParallelGzipEncoder.minimumBlockSize + 3 * chunkSize, seed: 4)
        + [UInt8](repeating: 7, count: 100)

    static func parallelEncoder() -> ParallelGzipEncoder {
        ParallelGzipEncoder(
            level: .fastest, threadCount: 2, blockSize: ParallelGzipEncoder.minimumBlockSize, outputChunkSize: chunkSize)
    }

    /// What the operation reads, and what it must produce when nothing stops it.
    static func material(_ operation: Operation) async throws -> (input: [UInt8], output: [UInt8]) {
        switch operation {
        case .copy: (data, data)
        case .compress: (data, try await gzipped(data, level: .fastest))
        case .parallelCompress: (blocks, try await drive(parallelEncoder(), blocks, chunkSize: chunkSize).output)
        case .decompress: (try await gzipped(data, level: .fastest), data)
        }
    }

    static func transform(_ operation: Operation) -> TransformFactory? {
        switch operation {
        case .copy: nil
        case .compress: { try GzipEncoder(level: .fastest, outputChunkSize: chunkSize) }
        case .parallelCompress: { parallelEncoder() }
        case .decompress: { GzipDecoder(outputChunkSize: chunkSize, outputLimit: nil) }
        }
    }

    /// How one run ended.
    struct Outcome {
        var result: Result<CopyReport, any Error>
        /// Every point the stages reached, in the order the hook saw them.
        var points: [AwaitPoint]
        /// What reached standard output (the descriptor shape), else the destination's bytes.
        var output: [UInt8]?
        /// The names left in the scratch directory.
        var entries: [Pathname]
        /// Descriptors still open into the scratch directory or onto the run's pipes.
        var leakedDescriptors: [String]
        /// Points reached after `run()` returned: a stage still running.
        var latePoints: [AwaitPoint]
    }

    /// Runs `operation` in `shape`, cancelling the running task when the hook reaches `cancelAt`.
    static func run(_ operation: Operation, _ shape: Shape, cancelAt: AwaitPoint?) async throws -> Outcome {
        let (input, _) = try await material(operation)
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let recorded = LockedValue<(points: [AwaitPoint], late: [AwaitPoint], hasReturned: Bool)>(([], [], false))
        let cancel = LockedValue<(@Sendable () -> Void)?>(nil)
        var pipes: [String] = []

        var feeder: ThreadResult<Void>?
        var drained: ThreadResult<[UInt8]>?
        var closeAfterRun: [Descriptor] = []
        let result: Result<CopyReport, any Error>
        do {
            let source: FileChunks
            switch shape {
            case .fileToFile, .fileToStandardOutput:
                let path = directory.appending("input")
                try writeFile(path, input)
                source = try await FileChunks.open(path, chunkSize: chunkSize)
            case .pipeToFile:
                let pipe = try makePipe()
                pipes.append(try descriptorTarget(pipe.read))
                closeAfterRun.append(pipe.read)
                feeder = ThreadResult {
                    var start = 0
                    while start < input.count {
                        let end = min(start + chunkSize, input.count)
                        try? Array(input[start..<end]).withUnsafeBytes { try pipe.write.write(contentsOf: $0) }
                        start = end
                    }
                    try? pipe.write.close()
                }
                source = try await FileChunks.reading(pipe.read, path: "-", chunkSize: chunkSize)
            }
            let sink: AnyTestSink
            switch shape {
            case .fileToFile, .pipeToFile:
                sink = AnyTestSink(try await FileSink.create(at: directory.appending("output"), source: source))
            case .fileToStandardOutput:
                let pipe = try makePipe()
                pipes.append(try descriptorTarget(pipe.write))
                closeAfterRun.append(pipe.write)
                drained = ThreadResult {
                    defer { try? pipe.read.close() }
                    return (try? readAll(pipe.read)) ?? []
                }
                sink = AnyTestSink(DescriptorSink(pipe.write, path: "-"))
            }
            var copy = Pipeline(
                from: source, to: sink, totalBytes: source.expectedSize, options: .init(capacity: 2),
                transform: transform(operation))
            copy.awaitPointHook = { point in
                let isLate = recorded.withLock { recorded in
                    recorded.points.append(point)
                    if recorded.hasReturned { recorded.late.append(point) }
                    return recorded.hasReturned
                }
                if !isLate && point == cancelAt { cancel.withLock { $0 }?() }
            }
            let armed = Latch()
            let task = Task { [copy] in
                await armed.wait()
                return try await copy.run()
            }
            cancel.withLock { $0 = { task.cancel() } }
            armed.open()
            result = await task.result
            recorded.withLock { $0.hasReturned = true }
            cancel.withLock { $0 = nil }
        }
        // The copy, its source and its sink are gone: whatever they opened must be closed. The
        // feeder never blocks (the input fits in the pipe), so it is done before its pipe closes.
        feeder?.wait()
        for descriptor in closeAfterRun { try descriptor.close() }
        let streamed = drained?.wait()

        let output = shape == .fileToStandardOutput
            ? streamed
            : (exists(directory.appending("output")) ? try readFile(directory.appending("output")) : nil)
        let (points, late) = recorded.withLock { ($0.points, $0.late) }
        return Outcome(
            result: result, points: points, output: output, entries: try entries(in: directory.path),
            leakedDescriptors: openDescriptorTargets().filter { name in
                name.hasPrefix(directory.path.description + "/") || pipes.contains(name)
            },
            latePoints: late)
    }

    @Test(arguments: Operation.allCases, Shape.allCases)
    func cancellingAtEveryAwaitPointCommitsNothing(operation: Operation, shape: Shape) async throws {
        let (_, expected) = try await Self.material(operation)
        let inputs: [Pathname] = shape == .pipeToFile ? [] : ["input"]

        let clean = try await Self.run(operation, shape, cancelAt: nil)
        _ = try clean.result.get()
        #expect(clean.output == expected)
        #expect(clean.latePoints == [])
        #expect(clean.leakedDescriptors == [])
        let points = clean.points
        #expect(Set(points).count == points.count, "every point is reached once")
        let commit = AwaitPoint(place: .sinkCommit, side: .after, ordinal: 0)
        #expect(points.last == commit)
        // The same points in every clean run, whatever the interleaving of the stages.
        let again = try await Self.run(operation, shape, cancelAt: nil)
        #expect(Set(again.points) == Set(points))

        // Cancelling after the commit point has nothing left to stop: the run reports success.
        var cancelled = 0
        for point in points where point != commit {
            let outcome = try await Self.run(operation, shape, cancelAt: point)
            let context = "\(operation) \(shape), cancelled at \(point)"
            #expect(outcome.points.contains(point), "\(context)")
            #expect(throws: CancellationError.self, "\(context)") { try outcome.result.get() }
            if shape == .fileToStandardOutput {
                let streamed = outcome.output ?? []
                #expect(expected.starts(with: streamed), "what was written is a prefix; \(context)")
            } else {
                #expect(outcome.output == nil, "nothing committed; \(context)")
            }
            #expect(outcome.entries == inputs, "no temporary file left; \(context)")
            #expect(outcome.leakedDescriptors == [], "\(context)")
            #expect(outcome.latePoints == [], "no stage runs after run() returned; \(context)")
            cancelled += 1
        }
        #expect(cancelled == points.count - 1)
        let places = AwaitPoint.Place.allCases.compactMap { place in
            let count = points.count { $0.place == place }
            return count == 0 ? nil : "\(place.rawValue) \(count)"
        }
        print("\(operation) \(shape): \(points.count) await points (\(places.joined(separator: ", "))), cancelled at \(cancelled)")
    }
}

/// A sink of either kind, so one copy type serves every shape.
struct AnyTestSink: ChunkSink {
    let base: any ChunkSink
    init(_ base: any ChunkSink) { self.base = base }
    func write(_ chunk: Chunk) async throws { try await base.write(chunk) }
    func commit() async throws { try await base.commit() }
    func abort() async { await base.abort() }
}

/// A value computed on a thread of its own, waited for without the cooperative pool.
final class ThreadResult<Value: Sendable>: Sendable {
    private let result = LockedValue<Value?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () -> Value) {
        Thread { [result, done] in
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }.start()
    }

    /// Blocks until the value is there.
    func wait() -> Value {
        done.wait()
        return result.withLock { $0! }
    }
}
