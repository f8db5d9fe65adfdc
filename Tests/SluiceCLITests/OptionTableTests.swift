import Sluice
@testable import SluiceCLI
import SluiceTestSupport
import Testing

/// The option table: each option declared once, the parser and the help both read from it.
@Suite struct OptionTableTests {
    func parse(_ arguments: [String], for command: CommandName) throws(UsageError) -> ParsedArguments {
        try ParsedArguments(arguments.map { Array($0.utf8) }, for: command)
    }

    func usageMessage(_ arguments: [String], for command: CommandName) -> String? {
        do throws(UsageError) {
            _ = try parse(arguments, for: command)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func everyOptionHasOneLongNameAndAShortNameUniqueInEachCommand() {
        for command in CommandName.allCases {
            let longs = CommandOption.all.filter { $0.commands.contains(command) }.map(\.long)
            #expect(Set(longs).count == longs.count, "\(command)")
            let shorts = CommandOption.all.filter { $0.commands.contains(command) }.flatMap(\.shortNames)
            #expect(Set(shorts).count == shorts.count, "\(command)")
            #expect(CommandOption.all.filter { $0.commands.contains(command) && $0.takesDigits }.count <= 1)
        }
        #expect(CommandOption.all.allSatisfy { !$0.commands.isEmpty })
    }

    @Test func helpTextsHaveNoHandPlacedLineBreaks() {
        for option in CommandOption.all {
            #expect(!option.abstract.contains("\n"), "\(option.long)")
        }
        for command in CommandName.allCases {
            let help = SluiceMain.help(for: command)
            #expect(!(help.overview + help.discussion.joined() + help.usage.joined()).contains("\n"), "\(command)")
            #expect(help.arguments.allSatisfy { !$0.abstract.contains("\n") })
            #expect(help.command == command)
        }
    }

    /// Each default is written once, in the table's default field, from the value the command
    /// uses: no summary spells one of its own.
    @Test func defaultsComeFromTheTablesDefaultField() {
        for option in CommandOption.all {
            #expect(!option.summary.contains("(default"), "\(option.long)")
            if case .none = option.value {} else {
                #expect(!option.summary.contains("(the default)"), "\(option.long)")
            }
            if let defaultValue = option.defaultValue {
                #expect(option.abstract.hasSuffix(" (default: \(defaultValue))"), "\(option.long)")
            }
        }
        #expect(CommandOption.level.defaultValue == "\(CompressionLevel.default.value)")
        #expect(CommandOption.blockSize.defaultValue == "256K")
        #expect(ParallelGzipEncoder.defaultBlockSize == 256 << 10)
        #expect(CommandOption.chunkSize.defaultValue == "1M")
        #expect(FileChunks.defaultChunkSize == 1 << 20)
        #expect(CommandOption.runs.defaultValue == "\(BenchCommand.Plan().runs)")
        #expect(CommandOption.reflink.defaultValue == "auto" && CommandOption.sparse.defaultValue == "auto")
        #expect(SluiceMain.help(for: .compress).render().contains("(default: 6)"))
    }

    /// The help of each visible command lists exactly the options the table gives it.
    @Test(arguments: CommandName.allCases.filter { $0 != .benchRun })
    func helpListsEveryOptionOfItsCommand(command: CommandName) {
        let text = SluiceMain.help(for: command).render()
        for option in CommandOption.all {
            // An option spelt the same for other commands (--verify, --preserve) counts as one.
            let listed = CommandOption.all.contains { $0.label == option.label && $0.commands.contains(command) && $0.isListed }
            #expect(text.contains("\n  \(option.label)") == listed, "\(option.label)")
        }
        for line in text.split(separator: "\n") {
            #expect(line.count <= HelpText.width, "\(line)")
        }
    }

    @Test func labelsShowEverySpelling() {
        #expect(CommandOption.output.label == "-o, --output <dst>")
        #expect(CommandOption.level.label == "-1 ... -9, --level <n>")
        #expect(CommandOption.progress.label == "--progress[=json]")
        #expect(CommandOption.noFsync.label == "--no-fsync")
    }

    @Test func spellingsOfOneOption() throws {
        #expect(try parse(["--level", "1", "--level=3", "-9"], for: .compress).integer(.level) == 9)
        #expect(try parse(["-9", "--level", "2"], for: .compress).integer(.level) == 2)
        #expect(try parse(["-ofile"], for: .compress).path(.output) == "file")
        #expect(try parse(["-co", "file"], for: .decompress).path(.output) == "file")
        #expect(try parse(["--output=a=b"], for: .compress).path(.output) == "a=b")
        let flags = try parse(["-qvf", "--no-fsync", "x"], for: .copy)
        #expect(flags.has(.quiet) && flags.has(.verbose) && flags.has(.force) && flags.has(.noFsync))
        #expect(!flags.has(.preserve))
        #expect(flags.operands == ["x"])
    }

    @Test func operandsKeepTheirOrderAndEveryByte() throws {
        let parsed = try ParsedArguments([Array("a".utf8), [0x66, 0xFF], Array("-".utf8), Array("--".utf8), Array("-f".utf8)], for: .copy)
        #expect(parsed.operands == ["a", Pathname(bytes: [0x66, 0xFF]), "-", "-f"])
        #expect(!parsed.has(.force))
    }

    @Test func valuesAreCheckedByKind() throws {
        #expect(try parse(["--chunk-size", "256K"], for: .copy).size(.chunkSize) == 256 << 10)
        #expect(try parse(["--chunk-size=1MiB"], for: .bench).size(.chunkSize) == 1 << 20)
        // KB, MB, GB are decimal, as dd reads them; K, KiB, M, MiB binary.
        #expect(try parse(["--chunk-size", "64KB"], for: .copy).size(.chunkSize) == 64_000)
        #expect(try parse(["--chunk-size", "2MB"], for: .copy).size(.chunkSize) == 2_000_000)
        #expect(try parse(["--chunk-size", "64kib"], for: .copy).size(.chunkSize) == 64 << 10)
        #expect(try parse(["--max-output", "1GB"], for: .decompress).size(.maxOutput) == 1_000_000_000)
        #expect(try parse(["--max-output", "0"], for: .decompress).size(.maxOutput) == 0)
        #expect(try parse(["--design", "push-fail,bounded-pull"], for: .bench).list(.design) == ["push-fail", "bounded-pull"])
        #expect(try parse(["--progress=json"], for: .copy).choice(.progress) == "json")
        #expect(try parse(["--progress"], for: .copy).has(.progress))
        #expect(usageMessage(["--chunk-size", "0"], for: .copy) == "--chunk-size must be at least 1 byte")
        #expect(usageMessage(["--chunk-size", "2G"], for: .bench) == "--chunk-size must be at most 1G")
        #expect(usageMessage(["--size", "1K"], for: .bench) == "--size must be at least 1M")
        #expect(usageMessage(["--runs", "x"], for: .bench) == "invalid value 'x' for --runs (expected a count of runs, at least 1)")
        #expect(usageMessage(["-0"], for: .compress) == "invalid compression level -0 (expected -1 ... -9)")
        #expect(usageMessage(["--consumer", ","], for: .bench) == "--consumer needs at least one value")
        #expect(usageMessage(["--capacity"], for: .copy) == "option '--capacity' needs a value")
        #expect(usageMessage(["--quiet=yes"], for: .copy) == "option '--quiet' takes no value")
    }

    /// An option is known only to the commands the table names.
    @Test func optionsOfOtherCommandsAreUnknown() {
        #expect(usageMessage(["-t"], for: .compress) == "unknown option '-t'")
        #expect(usageMessage(["-6"], for: .decompress) == "unknown option '-6'")
        #expect(usageMessage(["--output", "x"], for: .copy) == "unknown option '--output'")
        #expect(usageMessage(["--version"], for: .bench) == "unknown option '--version'")
        #expect(usageMessage(["--force"], for: .sluice) == "unknown option '--force'")
        #expect(usageMessage(["--size", "1M"], for: .copy) == "unknown option '--size'")
    }

    /// `--fast` and `--best` set the level, so the last of `-N`, `--level`, `--fast` and
    /// `--best` wins.
    @Test func fastAndBestSetTheLevel() throws {
        #expect(try parse(["--fast"], for: .compress).integer(.level) == 1)
        #expect(try parse(["--best"], for: .compress).integer(.level) == 9)
        #expect(try parse(["-9", "--fast"], for: .compress).integer(.level) == 1)
        #expect(try parse(["--best", "--level", "3"], for: .compress).integer(.level) == 3)
        #expect(!(try parse(["--fast"], for: .compress).has(.fast)))
    }

    /// `-d` and `-l` make `compress` `decompress`, whatever comes after them; a value that
    /// looks like `-d` stays a value.
    @Test func switchingOptionsChangeTheCommand() throws {
        #expect(try parse(["-d", "-t", "x.gz"], for: .compress).command == .decompress)
        #expect(try parse(["-cd", "x.gz"], for: .compress).command == .decompress)
        #expect(try parse(["--list", "x.gz"], for: .compress).command == .decompress)
        #expect(try parse(["-o", "-d", "x"], for: .compress).command == .compress)
        #expect(try parse(["--", "-d"], for: .compress).command == .compress)
        #expect(try parse(["-d", "x.gz"], for: .decompress).command == .decompress)
        #expect(try parse(["x"], for: .compress).command == .compress)
        #expect(usageMessage(["-d", "-9", "x.gz"], for: .compress) == "unknown option '-9'")
        #expect(usageMessage(["-d"], for: .copy) == "unknown option '-d'")
    }

    @Test func aRefusedOptionIsAUsageErrorWithItsMessage() {
        for spelling in ["-N", "--name", "-kN"] {
            #expect(usageMessage([spelling], for: .compress)?.hasPrefix("-N (--name) is not supported") == true)
        }
        #expect(usageMessage(["-N"], for: .copy) == "unknown option '-N'")
        #expect(!CommandOption.name.isListed)
    }

    @Test func aChoiceTakesOneOfItsValues() {
        #expect((try? parse(["--generate-completion-script", "zsh"], for: .sluice))?.choice(.generateCompletionScript) == "zsh")
        #expect(usageMessage(["--generate-completion-script=fish"], for: .sluice)
            == "unknown value 'fish' for --generate-completion-script (expected bash or zsh)")
    }

    @Test func wrappingBreaksAtSpacesWithinTheWidth() {
        #expect("aaa bbb ccc".wrapped(toColumns: 7) == ["aaa bbb", "ccc"])
        #expect("aaa  bbb".wrapped(toColumns: 80, after: "> ", indent: 2) == ["> aaa bbb"])
        #expect("a verylongword b".wrapped(toColumns: 5, after: "", indent: 1) == ["a", " verylongword", " b"])
        #expect("x y".wrapped(toColumns: 4, after: "ab", indent: 2) == ["abx", "  y"])
    }

    /// A misspelt option or command gets the one close spelling, and nothing when none is
    /// close or two are equally close.
    @Test func misspellingsGetASuggestion() throws {
        #expect(UsageError.closest(to: "recursiv", among: ["recursive", "reflink"]) == "recursive")
        #expect(UsageError.closest(to: "prserve", among: ["preserve", "progress"]) == "preserve")
        #expect(UsageError.closest(to: "cpoy", among: ["copy", "compress", "decompress", "bench"]) == "copy")
        #expect(UsageError.closest(to: "re", among: ["recursive", "reflink"]) == nil)
        #expect(UsageError.closest(to: "bogus", among: ["recursive", "reflink"]) == nil)
        #expect(throws: UsageError.self) { try parse(["--recursiv"], for: .copy) }
        do {
            _ = try parse(["--recursiv"], for: .copy)
        } catch {
            #expect(error.message == "unknown option '--recursiv' (did you mean '--recursive'?)")
        }
    }

    @Test func aMisspeltCommandGetsASuggestion() async throws {
        let result = try await CLI.run(["cpoy", "a", "b"], in: try Sandbox())
        #expect(result.status == 64)
        #expect(result.stderr.contains("unknown command 'cpoy' (did you mean 'copy'?)"), "\(result.stderr)")
    }
}
