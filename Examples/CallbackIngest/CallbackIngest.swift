import Foundation
import Sluice
import SluiceBenchmarks
import Synchronization

/// `CallbackIngest`: a producer thread that cannot pause pushes N bytes in chunks of a chosen
/// size (64 KiB by default), as fast as it can, through `PushBuffer.fromCallbacks` into a file
/// written atomically by `Pipeline` and `FileSink`, optionally through a sink throttled to a rate.
///
/// The push buffer holds 1 MiB in memory whatever the chunk size (its capacity is 1 MiB over the
/// chunk size, at least one chunk), so the count of chunks spilled measures how far the consumer
/// falls behind, not how big the buffer is.
///
/// With `--policy spill` and a sink slower than the producer, the backlog goes to a spill file
/// beside the output and the run completes with identical bytes and bounded memory; with
/// `--policy fail` the first refused chunk stops the producer, the copy fails with the capacity
/// error, and no output file appears.
@main
struct CallbackIngest {
    static let usage = """
        usage: CallbackIngest --policy fail|spill --size SIZE [--chunk-size SIZE] [--sink-rate RATE]
                              [--spill-limit SIZE] OUTPUT
               CallbackIngest --yield-cost [COUNT]

        Pushes SIZE bytes (K, M, G: binary units) from a thread that cannot pause into OUTPUT.
          --policy fail|spill   past 1 MiB buffered in memory: fail, or spill to a file beside OUTPUT
          --size SIZE           bytes to push, e.g. 1G
          --chunk-size SIZE     bytes per chunk pushed (default 64K); the buffer holds 1 MiB of them
          --sink-rate RATE      write OUTPUT at most RATE bytes per second, e.g. 200M
          --spill-limit SIZE    the most bytes the spill file may hold (default 8G)
          --yield-cost [COUNT]  measure a yield (PushBuffer vs AsyncStream), COUNT yields a round
        Prints the CRC-32 of what was pushed and of OUTPUT, bytes, seconds, chunks pushed and
        spilled, and peak RSS (VmHWM).
        Exit status: 0 success, 1 failure, 64 bad usage.
        """

    static func main() async {
        let status = await run(Array(CommandLine.arguments.dropFirst()))
        exit(status)
    }

    struct Options {
        var spills = false
        var size: Int64 = 0
        var chunkSize = 64 << 10
        var sinkRate: Int64?
        var spillLimit: Int64 = 8 << 30
        var output = ""
    }

    struct UsageError: Error {
        var message: String
    }

    nonisolated static func run(_ arguments: [String]) async -> Int32 {
        if arguments.first == "--yield-cost" {
            let count = arguments.count > 1 ? Int(arguments[1]) ?? 0 : 1_000_000
            guard count >= 1 else { return usageError("--yield-cost takes a positive count") }
            let result = YieldCost.measure(count: count)
            print("yield-count: \(count)")
            print("pushbuffer-yield-ns: \(String(format: "%.1f", result.pushBufferNanoseconds))")
            print("asyncstream-yield-ns: \(String(format: "%.1f", result.asyncStreamNanoseconds))")
            return 0
        }
        let options: Options
        do {
            options = try parse(arguments)
        } catch {
            return usageError(error.message)
        }
        return await ingest(options)
    }

    nonisolated static func usageError(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("CallbackIngest: \(message)\n\(usage)\n".utf8))
        return 64
    }

    nonisolated static func parse(_ arguments: [String]) throws(UsageError) -> Options {
        var options = Options()
        var policy: String?
        var output: String?
        var index = 0
        func value(_ name: String) throws(UsageError) -> String {
            index += 1
            guard index < arguments.count else { throw UsageError(message: "\(name) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--policy": policy = try value(argument)
            case "--size": options.size = try parseSize(try value(argument), name: argument)
            case "--chunk-size":
                let size = try parseSize(try value(argument), name: argument)
                guard size <= 1 << 30 else { throw UsageError(message: "--chunk-size: at most 1G") }
                options.chunkSize = Int(size)
            case "--sink-rate": options.sinkRate = try parseSize(try value(argument), name: argument)
            case "--spill-limit": options.spillLimit = try parseSize(try value(argument), name: argument)
            case "-h", "--help":
                print(usage)
                exit(0)
            default:
                if argument.hasPrefix("-") && argument != "-" { throw UsageError(message: "unknown option '\(argument)'") }
                guard output == nil else { throw UsageError(message: "one OUTPUT only") }
                output = argument
            }
            index += 1
        }
        switch policy {
        case "fail": options.spills = false
        case "spill": options.spills = true
        case nil: throw UsageError(message: "--policy is required")
        case let other?: throw UsageError(message: "unknown policy '\(other)' (fail or spill)")
        }
        guard options.size > 0 else { throw UsageError(message: "--size is required and must be positive") }
        guard let output else { throw UsageError(message: "OUTPUT is required") }
        options.output = output
        return options
    }

    /// `512`, `64K`, `200M`, `1G` (binary units; an optional `iB` or `B` after the letter).
    nonisolated static func parseSize(_ text: String, name: String) throws(UsageError) -> Int64 {
        var digits = Substring(text)
        for suffix in ["iB", "B"] where digits.hasSuffix(suffix) && digits.count > suffix.count {
            digits = digits.dropLast(suffix.count)
        }
        var multiplier: Int64 = 1
        switch digits.last?.uppercased() {
        case "K": multiplier = 1 << 10
        case "M": multiplier = 1 << 20
        case "G": multiplier = 1 << 30
        default: break
        }
        if multiplier > 1 { digits = digits.dropLast() }
        guard let number = Int64(digits), number > 0, number <= Int64.max / multiplier else {
            throw UsageError(message: "\(name): '\(text)' is not a size (e.g. 64K, 200M, 1G)")
        }
        return number * multiplier
    }

    nonisolated static func ingest(_ options: Options) async -> Int32 {
        let output = Pathname(options.output)
        let policy: PushBuffer<Chunk>.OverflowPolicy =
            options.spills ? .spill(directory: output.directory, limit: options.spillLimit) : .fail
        let start = ContinuousClock.now
        let producer = Mutex<Producer?>(nil)
        // 1 MiB in memory whatever the chunk size: spills measure the consumer, not the buffer.
        let memoryBytes = 1 << 20
        let capacity = max(1, memoryBytes / options.chunkSize)
        let buffer = PushBuffer<Chunk>.fromCallbacks(capacity: capacity, byteBudget: memoryBytes, policy: policy) { deliver, complete in
            let source = Producer(size: options.size, chunkSize: options.chunkSize, deliver: deliver, complete: complete)
            producer.withLock { $0 = source }
            source.start()
            return { source.stop() }
        }
        let source = producer.withLock { $0! }
        var status: Int32 = 0
        do {
            let file = try await FileSink.create(at: output, options: FileSink.Options(replacesExisting: true))
            let sink = ThrottledSink(file, bytesPerSecond: options.sinkRate)
            // OUTPUT is read back for its CRC-32 below: the copy need not compute one as well.
            let report = try await Pipeline(
                from: buffer, to: sink, totalBytes: options.size, options: PipelineOptions(computesCRC32: false)
            ).run()
            let seconds = start.duration(to: .now)
            let fileCRC = try await crc32(of: output)
            let summary = source.summary
            print("policy: \(options.spills ? "spill" : "fail")")
            print("bytes: \(report.bytesWritten)")
            print("pushed-crc32: \(summary.crc)")
            print("file-crc32: \(fileCRC)")
            print("seconds: \(String(format: "%.3f", Double(seconds.components.seconds) + Double(seconds.components.attoseconds) / 1e18))")
            if summary.crc != fileCRC || report.bytesWritten != options.size {
                FileHandle.standardError.write(Data("CallbackIngest: the output differs from what was pushed\n".utf8))
                status = 1
            }
        } catch {
            let summary = source.summary
            print("policy: \(options.spills ? "spill" : "fail")")
            print("pushed-bytes: \(summary.pushed)")
            print("producer: \(summary.outcome)")
            FileHandle.standardError.write(Data("CallbackIngest: \(error)\n".utf8))
            status = 1
        }
        let statistics = buffer.statistics
        print("chunk-bytes: \(options.chunkSize) (buffer: \(capacity) chunk\(capacity == 1 ? "" : "s"), \(memoryBytes) bytes in memory)")
        print("chunks: \(statistics.elementsAccepted)")
        print("spilled-chunks: \(statistics.elementsSpilled)")
        let peak = Int(ProcessMemory.peakResidentBytes())
        print("peak-rss-bytes: \(peak) (\(String(format: "%.1f", Double(peak) / 1_048_576)) MiB)")
        return status
    }

    nonisolated static func crc32(of path: Pathname) async throws -> CRC32 {
        var crc = CRC32()
        for try await chunk in try await FileChunks.open(path) {
            chunk.withUnsafeBytes { crc.update($0) }
        }
        return crc
    }
}
