import SluiceTestSupport
import Testing

/// The help of every command, as `sluice CMD --help` prints it: swift-argument-parser's
/// layout, every line within 80 columns, every option the command takes listed once.
@Suite(.timeLimit(.minutes(3)))
struct HelpTests {
    static let commands: [[String]] = [[], ["copy"], ["compress"], ["decompress"], ["bench"]]

    @Test(arguments: commands)
    func everyLineFitsEightyColumns(command: [String]) async throws {
        let result = try await CLI.run(command + ["--help"], in: try Sandbox())
        #expect(result.status == 0)
        let lines = result.stdoutText.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count > 10)
        for line in lines {
            #expect(terminalColumns(String(line)) <= 80, "\(line)")
            #expect(!line.hasSuffix(" "), "trailing space: '\(line)'")
        }
    }

    @Test(arguments: commands)
    func sectionsComeInTheArgumentParsersOrder(command: [String]) async throws {
        let result = try await CLI.run(command + ["--help"], in: try Sandbox())
        let headings = result.stdoutText.split(separator: "\n").compactMap { line -> String? in
            guard let colon = line.firstIndex(of: ":"), line.first?.isUppercase == true,
                line[..<colon].allSatisfy({ $0.isUppercase || $0 == " " })
            else { return nil }
            return String(line[..<colon])
        }
        let expected: [String] = switch command.first {
        case nil: ["OVERVIEW", "USAGE", "OPTIONS", "SUBCOMMANDS"]
        case "bench": ["OVERVIEW", "USAGE", "OPTIONS"]
        default: ["OVERVIEW", "USAGE", "ARGUMENTS", "OPTIONS"]
        }
        #expect(headings == expected)
        #expect(result.stdoutText.contains("\nUSAGE: sluice \(command.first.map { $0 + " " } ?? "")"))
    }

    /// C57 (a): decompress's help speaks of decompression: `-p` decodes, `-d` is accepted, `-n`
    /// restores no name; compress's of compression.
    @Test func eachCommandsOptionsSpeakOfWhatItDoes() async throws {
        let decompress = try await CLI.run(["decompress", "--help"], in: try Sandbox()).stdoutText
        let compress = try await CLI.run(["compress", "--help"], in: try Sandbox()).stdoutText
        #expect(!decompress.contains(" compress on"), "\(decompress)")
        #expect(!decompress.contains("sluice compress -d is"), "\(decompress)")
        #expect(!decompress.contains(" store no file name"), "\(decompress)")
        #expect(decompress.contains("decompress on <n> threads") && decompress.contains("restore no file name"), "\(decompress)")
        #expect(compress.contains("compress on <n> threads") && compress.contains("store no file name"), "\(compress)")
        #expect(!compress.contains("decompress on <n> threads"), "\(compress)")
    }

    /// The top level lists each subcommand with its own overview, and how to get its help.
    @Test func topLevelListsTheSubcommandsAndTheExitStatuses() async throws {
        let sandbox = try Sandbox()
        let help = try await CLI.run(["--help"], in: sandbox).stdoutText
        for command in ["copy", "compress", "decompress", "bench", "help"] {
            #expect(help.contains("\n  \(command) "), "\(command)")
        }
        #expect(help.contains("  See 'sluice help <subcommand>' for detailed help.\n"))
        // The exit-status table, re-flowed: every status is still there.
        for status in ["0 success", "1 failure", "2 success", "64 bad", "130", "143", "129", "131", "141"] {
            #expect(help.contains(status), "\(status)")
        }
        let copy = try await CLI.run(["copy", "--help"], in: sandbox).stdoutText
        let overview = try #require(copy.split(separator: "\n\n").first).dropFirst("OVERVIEW: ".count)
        let listed = try #require(help.split(separator: "\n").firstIndex(where: { $0.hasPrefix("  copy ") }))
        #expect(help.split(separator: "\n")[listed].contains(overview.split(separator: " ").prefix(3).joined(separator: " ")))
    }

    /// Each option's row in the option column, its text beside it from column 26 (or on the
    /// next line when the option is too long), continued lines indented to the same column.
    @Test func optionRowsAlignAtColumnTwentySix() async throws {
        let help = try await CLI.run(["decompress", "--help"], in: try Sandbox()).stdoutText
        let lines = help.split(separator: "\n").map(String.init)
        let options = try #require(lines.firstIndex(of: "OPTIONS:"))
        for line in lines[(options + 1)...] {
            #expect(line.hasPrefix("  "), "\(line)")
            let text = line.dropFirst(26)
            #expect(line.count <= 26 || line[line.index(line.startIndex, offsetBy: 25)] == " ", "\(line)")
            #expect(!text.isEmpty || line.count < 26, "\(line)")
        }
        #expect(lines.contains("  -t, --test              decode and verify, write nothing"))
        #expect(lines.contains(where: { $0.hasPrefix("  --max-output <size>     fail once") }))
    }

    /// `decompress --help` says what `-l` does now: it decodes (as gzip 1.12), with no `*` mark.
    @Test func listIsDescribedAsDecoding() async throws {
        let help = try await CLI.run(["decompress", "--help"], in: try Sandbox()).stdoutText
        let text = help.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(text.contains("decodes each file to its end"))
        #expect(!text.contains("without decoding"))
        #expect(!text.contains("a * marks"))
    }
}
