#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Sluice
import SluiceBenchmarks

/// `sluice bench`: the unbounded `AsyncStream` bridge against the pull/bounded pipeline (and the
/// push buffer's two overflow policies), each design in a child process of its own, so that its
/// peak RSS is its own; with `cp` and `cat` timed side by side in the same invocation.
enum BenchCommand {
    static let help = HelpText(
        overview: "Measure memory and speed: unbounded AsyncStream against Sluice's pull/bounded pipeline.",
        usage: ["sluice bench [options]"],
        arguments: [],
        options: [
            ("--size <size>", "input size, binary units (default 256M)"),
            ("--runs <n>", "counted runs per design and consumer; the median is reported\n(default 3; one warm-up run is discarded)"),
            ("--out <dir>", "where to write bench.csv and memory.svg (default bench-results)"),
            ("--design <list>", "comma-separated: unbounded-stream, bounded-pull, push-fail, push-spill\n(default: all)"),
            ("--consumer <list>", "comma-separated: fast, slow (default: both)"),
            ("--sink-rate <rate>", "the slow consumer's bytes per second, binary units (default 200M)"),
            ("--chunk-size <size>", "bytes per chunk (default 1M)"),
            ("--capacity <n>", "chunks buffered between stages (default 4)"),
            ("-h, --help", "show this help"),
        ],
        discussion: """
            Each run happens in a child process; peak RSS is that child's own high-water mark
            (VmHWM at exit).
            Writes use --no-fsync semantics: the disk's flush is not measured. Outputs are deleted
            between runs, outside the timed region.
            """)

    struct Plan {
        var size: Int64 = 256 << 20
        var runs = 3
        var out: FilePath = "bench-results"
        var designs = BenchmarkDesign.allCases
        var consumers = BenchmarkConsumer.allCases
        var sinkRate: Int64 = 200 << 20
        var chunkSize = 1 << 20
        var capacity = 4
    }

    static func run(_ arguments: [[UInt8]]) async throws(UsageError) -> Int32 {
        var plan = Plan()
        var scanner = ArgumentScanner(arguments)
        while let item = scanner.next() {
            switch item {
            case .short("h"), .long("help", nil):
                Console.writeOutput(help.render())
                return ExitStatus.success
            case .long("size", let attached):
                plan.size = try parseSize(try scanner.value(for: "--size", attached: attached), option: "--size")
                guard plan.size >= 1 << 20 else { throw UsageError("--size must be at least 1M") }
            case .long("runs", let attached):
                let text = try scanner.value(for: "--runs", attached: attached)
                guard let runs = Int(text), runs >= 1 else { throw UsageError("invalid value '\(text)' for --runs (at least 1)") }
                plan.runs = runs
            case .long("out", let attached):
                plan.out = FilePath(try scanner.value(for: "--out", attached: attached))
            case .long("design", let attached):
                plan.designs = try list(try scanner.value(for: "--design", attached: attached), option: "--design")
            case .long("consumer", let attached):
                plan.consumers = try list(try scanner.value(for: "--consumer", attached: attached), option: "--consumer")
            case .long("sink-rate", let attached):
                plan.sinkRate = try parseSize(try scanner.value(for: "--sink-rate", attached: attached), option: "--sink-rate")
                guard plan.sinkRate >= 1 << 10 else { throw UsageError("--sink-rate must be at least 1K per second") }
            case .long("chunk-size", let attached):
                let size = try parseSize(try scanner.value(for: "--chunk-size", attached: attached), option: "--chunk-size")
                guard size >= 1 && size <= 1 << 30 else { throw UsageError("--chunk-size must be 1 byte to 1G") }
                plan.chunkSize = Int(size)
            case .long("capacity", let attached):
                let text = try scanner.value(for: "--capacity", attached: attached)
                guard let value = Int(text), value >= 1 else { throw UsageError("invalid value '\(text)' for --capacity (at least 1)") }
                plan.capacity = value
            default:
                throw UsageError("unknown option \(item.spelling) for 'bench'")
            }
        }
        do {
            return try await BenchRunner(plan: plan).run()
        } catch {
            Console.message("\(error)")
            return ExitStatus.failure
        }
    }

    static func list<T: RawRepresentable & CaseIterable>(_ text: String, option: String) throws(UsageError) -> [T] where T.RawValue == String {
        var result: [T] = []
        for name in text.split(separator: ",") {
            guard let value = T(rawValue: String(name)) else {
                let known = T.allCases.map(\.rawValue).joined(separator: ", ")
                throw UsageError("unknown value '\(name)' for \(option) (expected \(known))")
            }
            result.append(value)
        }
        guard !result.isEmpty else { throw UsageError("\(option) needs at least one value") }
        return result
    }

    /// The hidden memory probe: `sluice bench-probe SIZE` allocates and touches SIZE bytes and
    /// prints its own peak RSS (`VmHWM`) in bytes: the measure `bench` reports, tested end to end.
    static func runProbe(_ arguments: [[UInt8]]) -> Int32 {
        guard arguments.count == 1, let size = try? parseSize(String(decoding: arguments[0], as: UTF8.self), option: "SIZE"),
            size <= Int64(Int.max)
        else {
            Console.message("bench-probe: expected one SIZE")
            return ExitStatus.usage
        }
        Console.writeOutput("\(MemoryProbe.run(allocating: Int(size)))\n")
        return ExitStatus.success
    }

    /// The hidden child: `sluice bench-run --design D --consumer C --input I --output O
    /// --sink-rate R --chunk-size S --capacity N --spill-dir DIR`; prints one JSON object.
    static func runChild(_ arguments: [[UInt8]]) async -> Int32 {
        var values: [String: String] = [:]
        var scanner = ArgumentScanner(arguments)
        while let item = scanner.next() {
            guard case .long(let name, let attached) = item, let value = try? scanner.value(for: name, attached: attached) else {
                Console.message("bench-run: unexpected argument \(item.spelling)")
                return ExitStatus.usage
            }
            values[name] = value
        }
        guard let design = values["design"].flatMap(BenchmarkDesign.init(rawValue:)),
            let consumer = values["consumer"].flatMap(BenchmarkConsumer.init(rawValue:)),
            let input = values["input"], let output = values["output"], let spill = values["spill-dir"],
            let rate = values["sink-rate"].flatMap(Int64.init), let chunkSize = values["chunk-size"].flatMap(Int.init),
            let capacity = values["capacity"].flatMap(Int.init)
        else {
            Console.message("bench-run: missing or invalid arguments")
            return ExitStatus.usage
        }
        let result = await BenchmarkScenario.run(.init(
            design: design, consumer: consumer, input: FilePath(input), output: FilePath(output), sinkRate: rate,
            chunkSize: chunkSize, capacity: capacity, spillDirectory: FilePath(spill)))
        guard let data = try? JSONEncoder().encode(result) else { return ExitStatus.failure }
        Console.writeOutput(String(decoding: data, as: UTF8.self) + "\n")
        return ExitStatus.success
    }
}
