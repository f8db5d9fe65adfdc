import Sluice
import SluiceBenchmarks
@testable import SluiceCLI
import Testing

/// Every default `--help` and the manual show is the value the commands use: a default that
/// is a value of its option, given explicitly, changes nothing; the ones that are words
/// (`--capacity`'s, `--jobs`') are read back from the help and checked against what the
/// commands do. The help and the manual print ``CommandOption/abstract``, so what is checked
/// here is what a person reads.
@Suite struct HelpDefaultsTests {
    static func parsed(_ command: CommandName, _ arguments: [String]) throws -> ParsedArguments {
        try ParsedArguments(arguments.map { Array($0.utf8) }, for: command)
    }

    /// The numbers in `text`, in order.
    static func numbers(in text: String) -> [Int] {
        text.split { !$0.isNumber }.compactMap { Int($0) }
    }

    @Test func aDefaultGivenExplicitlyChangesNothing() throws {
        let chunk = try #require(CommandOption.chunkSize.defaultValue)
        for command in [CommandName.copy, .compress, .decompress] {
            let (none, given) = (CommonOptions(try Self.parsed(command, [])), CommonOptions(try Self.parsed(command, ["--chunk-size", chunk])))
            #expect(none.chunkSize == given.chunkSize && none.capacity == given.capacity, "\(command)")
        }
        let level = try #require(CommandOption.level.defaultValue)
        let block = try #require(CommandOption.blockSize.defaultValue)
        let none = try GzipOptions(.compress, try Self.parsed(.compress, []))
        let given = try GzipOptions(.compress, try Self.parsed(.compress, ["--level", level, "--block-size", block]))
        #expect(none.level == given.level && none.blockSize == given.blockSize)
        for (option, value) in [(CommandOption.reflink, \CommonOptions.reflink.rawValue), (.sparse, \CommonOptions.sparse.rawValue)] {
            let shown = try #require(option.defaultValue)
            #expect(CommonOptions(try Self.parsed(.copy, []))[keyPath: value] == shown, "--\(option.long)")
            #expect(CommonOptions(try Self.parsed(.copy, ["--\(option.long)=\(shown)"]))[keyPath: value] == shown, "--\(option.long)")
        }
        let bench = BenchCommand.Plan(try Self.parsed(.bench, []))
        let benchGiven = BenchCommand.Plan(try Self.parsed(.bench, [
            "--size", try #require(CommandOption.size.defaultValue), "--runs", try #require(CommandOption.runs.defaultValue),
            "--sink-rate", try #require(CommandOption.sinkRate.defaultValue),
        ]))
        #expect(bench.size == benchGiven.size && bench.runs == benchGiven.runs && bench.sinkRate == benchGiven.sinkRate)
    }

    /// `--capacity`'s default, "4M of chunks, 4 to 1024: 4 at 1M, 1024 at 4K": the chunks a
    /// command buffers per channel at each chunk size, between the bounds, are those bytes'.
    @Test func theCapacityTheHelpShowsIsTheCommands() throws {
        let shown = try #require(CommandOption.capacity.defaultValue)
        let bytes = try ValueKind.parseSize(String(shown.prefix { $0 != " " }), option: "--capacity")
        let numbers = Self.numbers(in: String(shown.drop { $0 != " " }))
        try #require(numbers.count >= 6, "\(shown)")
        let (low, high) = (numbers[0], numbers[1])
        for chunk in ["4K", "64K", "1M", "16M"] {
            let options = CommonOptions(try Self.parsed(.copy, ["--chunk-size", chunk]))
            let size = try ValueKind.parseSize(chunk, option: "--chunk-size")
            #expect(options.capacity == min(high, max(low, Int(bytes / size))), "\(chunk): \(options.capacity)")
        }
        #expect(CommonOptions(try Self.parsed(.copy, ["--chunk-size", "1M"])).capacity == numbers[2])
        #expect(CommonOptions(try Self.parsed(.copy, ["--chunk-size", "4K"])).capacity == numbers[4])
    }

    /// `--jobs`: "4 per processor, 4 to 64" files at once, "within one 32M buffer budget".
    @Test func theJobsAndBudgetTheHelpShowsAreTheCommands() throws {
        let shown = try #require(CommandOption.jobs.defaultValue)
        let numbers = Self.numbers(in: shown)
        try #require(numbers.count == 3, "\(shown)")
        let processors = ProcessorAffinity.availableProcessorCount()
        let options = CommonOptions(try Self.parsed(.copy, []))
        #expect(options.jobs == min(numbers[2], max(numbers[1], numbers[0] * processors)))
        let budget = try #require(CommandOption.jobs.summary.split(separator: " ").first { $0.last == "M" })
        let copier = options.copierOptions()
        #expect(copier.byteBudget == Int(try ValueKind.parseSize(String(budget), option: "--jobs")))
        #expect(copier.width == options.jobs)
        #expect(CommandOption.jobs.abstract.contains("(default: \(shown))"))
    }
}
