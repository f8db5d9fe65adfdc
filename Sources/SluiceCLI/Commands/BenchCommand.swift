#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials
import Sluice
import SluiceBenchmarks

/// `sluice bench`: the unbounded `AsyncStream` bridge against the pull/bounded pipeline (and the
/// push buffer's two overflow policies), each design in a child process of its own, so that its
/// peak RSS is its own; with `cp` and `cat` timed side by side in the same invocation, and with
/// `--chunk-sizes`, a sweep of chunk sizes against `dd` that shows what a chunk costs.
enum BenchCommand {
    /// `sluice bench --help`; its options come from the option table.
    static let help = HelpText(
        command: .bench,
        overview: "Measure memory and speed: unbounded AsyncStream against Sluice's pull/bounded pipeline.",
        discussion: [
            "Each run happens in a child process; peak RSS is that child's own high-water mark (VmHWM at exit), "
                + "CPU time the user and system time wait4 reports for it. Writes use --no-fsync semantics: the "
                + "disk's flush is not measured. Outputs are deleted between runs, outside the timed region. One "
                + "warm-up round is discarded; the order of the runs is reversed from one round to the next.",
            "With --chunk-sizes, each size adds bounded-pull and unbounded-stream with the fast consumer and "
                + "dd bs=SIZE; the summary gives, per size, the speed against dd and the CPU time one more chunk "
                + "costs (against the largest size), and chunk-sizes.svg plots throughput against chunk size.",
        ],
        usage: ["[<options>]"])

    /// The hidden child's usage, shown by its usage errors (it has no help).
    static let childHelp = HelpText(
        command: .benchRun,
        overview: "Run one design with one consumer and print the result as one JSON object.",
        usage: [
            "--design <design> --consumer <consumer> --input <path> --output <path> --sink-rate <rate> "
                + "--chunk-size <size> --capacity <n> --spill-dir <dir>",
        ],
        isHidden: true)

    /// What to measure, from the command line.
    struct Plan {
        var size: Int64 = 256 << 20
        var runs = 3
        var out: Pathname = "bench-results"
        var designs = BenchmarkDesign.allCases
        var consumers = BenchmarkConsumer.allCases
        var sinkRate: Int64 = 200 << 20
        var chunkSize = 1 << 20
        /// `--capacity`, or nil: each run then uses the pipeline's default for its chunk size.
        var capacity: Int?
        /// The chunk-size sweep's sizes in bytes, smallest first, each once; empty: no sweep.
        var chunkSizes: [Int] = []

        /// The capacity of a run with chunks of `chunkBytes` bytes.
        func capacity(chunkBytes: Int) -> Int {
            capacity ?? PipelineOptions.defaultCapacity(chunkSize: chunkBytes)
        }

        /// The defaults, which the option table's help gives.
        init() {}

        /// The options given in `arguments`, the defaults for the others.
        init(_ arguments: ParsedArguments) {
            size = arguments.size(.size) ?? size
            runs = arguments.integer(.runs) ?? runs
            out = arguments.path(.out) ?? out
            designs = arguments.list(.design)?.compactMap(BenchmarkDesign.init(rawValue:)) ?? designs
            consumers = arguments.list(.consumer)?.compactMap(BenchmarkConsumer.init(rawValue:)) ?? consumers
            sinkRate = arguments.size(.sinkRate) ?? sinkRate
            chunkSize = arguments.size(.chunkSize).map { Int($0) } ?? chunkSize
            capacity = arguments.integer(.capacity)
            chunkSizes = Set((arguments.sizes(.chunkSizes) ?? []).map { Int($0) }).sorted()
        }
    }

    /// Runs the benchmark the command line describes.
    ///
    /// - Returns: 0, or 1 when a step of the benchmark failed (the message says which).
    /// - Throws: ``UsageError`` for an operand: `bench` takes none.
    static func run(_ arguments: ParsedArguments) async throws(UsageError) -> Int32 {
        if let operand = arguments.operands.first { throw UsageError("unexpected argument '\(operand)'") }
        do {
            return try await BenchRunner(plan: Plan(arguments)).run()
        } catch {
            Console.message("\(error)")
            return ExitStatus.failure
        }
    }

    /// The hidden memory probe: `sluice bench-probe SIZE` allocates and touches SIZE bytes and
    /// prints its own peak RSS (`VmHWM`) in bytes: the measure `bench` reports, tested end to end.
    static func runProbe(_ arguments: [[UInt8]]) -> Int32 {
        guard arguments.count == 1, let size = try? ValueKind.parseSize(String(decoding: arguments[0], as: UTF8.self), option: "SIZE"),
            size <= Int64(Int.max)
        else {
            Console.message("bench-probe: expected one SIZE")
            return ExitStatus.usage
        }
        Console.writeOutput("\(MemoryProbe.run(allocating: Int(size)))\n")
        return ExitStatus.success
    }

    /// The hidden child: `sluice bench-run` with every option of ``childHelp``; prints one JSON
    /// object.
    ///
    /// - Throws: ``UsageError`` when an option is missing, or a list holds more than one name.
    static func runChild(_ arguments: ParsedArguments) async throws(UsageError) -> Int32 {
        guard arguments.operands.isEmpty,
            let designs = arguments.list(.design), designs.count == 1, let design = BenchmarkDesign(rawValue: designs[0]),
            let consumers = arguments.list(.consumer), consumers.count == 1,
            let consumer = BenchmarkConsumer(rawValue: consumers[0]),
            let input = arguments.path(.input), let output = arguments.path(.output),
            let spill = arguments.path(.spillDirectory), let rate = arguments.size(.sinkRate),
            let chunkSize = arguments.size(.chunkSize), let capacity = arguments.integer(.capacity)
        else {
            throw UsageError("missing or invalid arguments")
        }
        let result = await BenchmarkScenario.run(.init(
            design: design, consumer: consumer, input: input, output: output, sinkRate: rate,
            chunkSize: Int(chunkSize), capacity: capacity, spillDirectory: spill))
        guard let data = try? JSONEncoder().encode(result) else { return ExitStatus.failure }
        Console.writeOutput(String(decoding: data, as: UTF8.self) + "\n")
        return ExitStatus.success
    }
}
