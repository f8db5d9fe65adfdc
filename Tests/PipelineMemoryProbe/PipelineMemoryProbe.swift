import Foundation
import Sluice

/// A library user's program, for the tests of the pipeline's memory bound: reads INPUT with
/// `FileChunks.open` (holes found, the default), makes a new chunk of every chunk it is given,
/// through a `map` over the source or through a transform of its own, compresses with
/// `ParallelGzipEncoder` at level 1, and writes OUTPUT with `FileSink`. Prints the report's
/// `peakBufferedBytes` and the process's peak RSS (`VmHWM`), in bytes, on one line.
///
/// `copier` does the transform's copy as a ``Copier`` job, whose reads find holes up to 64 MiB.
///
/// usage: PipelineMemoryProbe map|transform|copier|none INPUT OUTPUT
@main
struct PipelineMemoryProbe {
    /// A transform that copies each chunk it is given into a new one, then compresses it.
    final class CopyingTransform: ChunkTransform {
        let encoder = ParallelGzipEncoder(level: .fastest, threadCount: 2)

        func process(_ chunk: Chunk, emit: (Chunk) async throws -> Void) async throws {
            try await encoder.process(copy(chunk), emit: emit)
        }

        func finish(emit: (Chunk) async throws -> Void) async throws -> TransformSummary {
            try await encoder.finish(emit: emit)
        }
    }

    @Sendable static func copy(_ chunk: Chunk) -> Chunk {
        chunk.withUnsafeBytes { source in
            Chunk(capacity: source.count) { target in
                target.copyMemory(from: source)
                return source.count
            }
        }
    }

    static func main() async {
        do {
            try await run()
        } catch {
            FileHandle.standardError.write(Data("PipelineMemoryProbe: \(error)\n".utf8))
            exit(1)
        }
    }

    static func run() async throws {
        let arguments = CommandLine.arguments.dropFirst()
        guard arguments.count == 3, let mode = arguments.first, ["map", "transform", "copier", "none"].contains(mode) else {
            FileHandle.standardError.write(Data("usage: PipelineMemoryProbe map|transform|copier|none INPUT OUTPUT\n".utf8))
            exit(64)
        }
        let (input, output) = (Pathname(arguments[arguments.startIndex + 1]), Pathname(arguments[arguments.startIndex + 2]))
        if mode == "copier" {
            let job = Copier.Job(from: .file(input), to: .file(output), transform: { CopyingTransform() })
            let committed = try await Copier().copy(job)
            return Self.print(committed.report)
        }
        let source = try await FileChunks.open(input)
        let sink = try await FileSink.create(at: output, source: source)
        let report: CopyReport
        switch mode {
        case "map":
            let copy = Pipeline(
                from: source.map(Self.copy), to: sink, totalBytes: source.expectedSize,
                transform: { ParallelGzipEncoder(level: .fastest, threadCount: 2) })
            report = try await copy.run()
        case "transform":
            report = try await Pipeline(from: source, to: sink, totalBytes: source.expectedSize, transform: { CopyingTransform() }).run()
        default:
            report = try await Pipeline(
                from: source, to: sink, totalBytes: source.expectedSize,
                transform: { ParallelGzipEncoder(level: .fastest, threadCount: 2) }
            ).run()
        }
        Self.print(report)
    }

    static func print(_ report: CopyReport) {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let peak = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
            .flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? -1
        Swift.print("\(report.peakBufferedBytes) \(peak * 1024)")
    }
}
