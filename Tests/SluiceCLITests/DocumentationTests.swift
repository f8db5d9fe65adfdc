import Foundation
@testable import SluiceCLI
import Testing

/// The documents a user reads give `sluice` only options the option table declares, each to a
/// command that takes it, and list the exit statuses `sluice --help` prints. The manual page,
/// the help and the completion scripts are generated from the table; these checks keep the
/// prose that is not (the README, the Command line article, CONTRIBUTING.md and
/// benchmarks/README.md) from drifting from it.
@Suite struct DocumentationTests {
    /// The package's root: this file is `Tests/SluiceCLITests/DocumentationTests.swift`.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let documents = [
        "README.md", "CONTRIBUTING.md", "benchmarks/README.md", "Sources/Sluice/Sluice.docc/Guides/CommandLine.md",
    ]

    static func read(_ document: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
    }

    /// The code of `markdown`: each line of its code blocks, and each code span of its prose
    /// (a span may run over a line break).
    static func code(of markdown: String) -> [String] {
        var code: [String] = []
        var prose: [Substring] = []
        var inBlock = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                inBlock.toggle()
            } else if inBlock {
                code.append(String(line))
            } else {
                prose.append(line)
            }
        }
        let parts = prose.joined(separator: " ").split(separator: "`", omittingEmptySubsequences: false)
        code += stride(from: 1, to: parts.count, by: 2).map { String(parts[$0]) }
        return code
    }

    /// The words that end a command line in a shell: what follows them is another command.
    static let shellOperators: Set<String> = ["|", "\\|", "||", ";", "&&", ">", ">>", "2>", "2>>", "<"]

    /// Each run of `sluice` in `code`: the command it names (`sluice` itself when the next word
    /// is no subcommand) and its words, up to the end of the line or span, a shell operator or a
    /// comment.
    static func invocations(in code: [String]) -> [(command: CommandName, words: [String])] {
        var found: [(command: CommandName, words: [String])] = []
        for piece in code {
            var words = piece.split(whereSeparator: \.isWhitespace).map(String.init)
            while let start = words.firstIndex(of: "sluice") {
                words.removeFirst(start + 1)
                var command = CommandName.sluice
                if let first = words.first, let named = CommandName(subcommand: first) {
                    command = named
                    words.removeFirst()
                }
                let end = words.firstIndex(where: { shellOperators.contains($0) || $0.hasPrefix("#") }) ?? words.count
                found.append((command: command, words: Array(words[..<end])))
                words.removeFirst(end)
            }
        }
        return found
    }

    /// The words of `words` that name no option `command` takes in the table: a `--long` (its
    /// `=value` aside), a cluster of short names (`-lv`; one that takes a value ends the cluster),
    /// a dash and digits (`-9`) unless an option takes them; alternatives (`-r|-a`) each on its
    /// own. Brackets and punctuation around a word are no part of it.
    static func unknownOptions(_ words: [String], of command: CommandName) -> [String] {
        let options = CommandOption.all.filter { $0.commands.contains(command) }
        var unknown: [String] = []
        for word in words {
            let trimmed = word.trimmingCharacters(in: CharacterSet(charactersIn: "[](),.;:"))
            for spelling in trimmed.split(separator: "|").map(String.init) where spelling.hasPrefix("-") && spelling != "-" {
                if spelling.hasPrefix("--") {
                    let long = String(spelling.dropFirst(2).prefix(while: { $0 != "=" }))
                    if !options.contains(where: { $0.long == long }) { unknown.append(spelling) }
                } else if spelling.dropFirst().allSatisfy({ ("0"..."9").contains($0) }) {
                    if !options.contains(where: { $0.takesDigits }) { unknown.append(spelling) }
                } else {
                    for name in spelling.dropFirst() {
                        guard let option = options.first(where: { $0.shortNames.contains(name) }) else {
                            unknown.append(spelling)
                            break
                        }
                        if case .required = option.value { break }
                    }
                }
            }
        }
        return unknown
    }

    @Test(arguments: DocumentationTests.documents)
    func everyOptionADocumentGivesSluiceIsInTheTable(document: String) throws {
        let runs = Self.invocations(in: Self.code(of: try Self.read(document)))
        #expect(!runs.isEmpty, "\(document) runs sluice nowhere")
        for run in runs {
            let unknown = Self.unknownOptions(run.words, of: run.command)
            #expect(
                unknown.isEmpty,
                "\(document): \(run.command.invocation) \(run.words.joined(separator: " ")): \(unknown) not in the option table")
        }
    }

    /// The checker itself: it finds what is not in the table, and passes what is.
    @Test func theCheckFindsAnOptionTheTableDoesNotHave() {
        let runs = Self.invocations(in: ["sluice copy --bogus -Z -t a b | grep -x", "sluice compress -9 -dc x.gz", "sluice --version"])
        #expect(runs.map { $0.command } == [.copy, .compress, .sluice])
        #expect(Self.unknownOptions(runs[0].words, of: runs[0].command) == ["--bogus", "-Z", "-t"])
        #expect(Self.unknownOptions(runs[1].words, of: runs[1].command).isEmpty)
        #expect(Self.unknownOptions(runs[2].words, of: runs[2].command).isEmpty)
        #expect(Self.unknownOptions(["-9"], of: .decompress) == ["-9"])
        #expect(Self.unknownOptions(["-r|-a", "--reflink=never", "[-r]"], of: .copy).isEmpty)
    }

    /// The numbers written in `text`.
    static func numbers(in text: some StringProtocol) -> Set<Int> {
        Set(text.split(whereSeparator: { !("0"..."9").contains($0) }).compactMap { Int($0) })
    }

    /// The exit statuses `sluice --help` prints (the paragraph of its discussion that lists them).
    static var helpStatuses: Set<Int> {
        numbers(in: SluiceMain.help.discussion.first(where: { $0.hasPrefix("Exit status") }) ?? "")
    }

    /// The lines of `document` from the line `heading` to the next heading.
    static func section(of document: String, under heading: String) throws -> [Substring] {
        let lines = try read(document).split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0 == heading }) else { return [] }
        return Array(lines[(start + 1)...].prefix(while: { !$0.hasPrefix("#") }))
    }

    @Test(arguments: [
        ("README.md", "## Exit status"),
        ("Sources/Sluice/Sluice.docc/Guides/CommandLine.md", "## Exit status and messages"),
    ])
    func theExitStatusTableIsTheHelps(document: String, heading: String) throws {
        let section = try Self.section(of: document, under: heading)
        // The first cell of each row of the table: the statuses it lists.
        let listed = section.filter { $0.hasPrefix("|") }.reduce(into: Set<Int>()) { statuses, row in
            statuses.formUnion(Self.numbers(in: row.split(separator: "|").first ?? ""))
        }
        let mentioned = section.reduce(into: Set<Int>()) { $0.formUnion(Self.numbers(in: $1)) }
        let help = Self.helpStatuses
        #expect(help.count >= 7, "\(help)")
        #expect(listed.count >= 6, "\(document) has no exit-status table under \(heading)")
        #expect(listed.isSubset(of: help), "\(document) lists \(listed.subtracting(help)), which sluice --help does not")
        #expect(help.isSubset(of: mentioned), "\(document) leaves out \(help.subtracting(mentioned))")
        let returned = [
            ExitStatus.success, ExitStatus.failure, ExitStatus.warning, ExitStatus.usage, ExitStatus.brokenPipe,
            ExitStatus.signal(2), ExitStatus.signal(15), ExitStatus.signal(1), ExitStatus.signal(3),
        ]
        #expect(Set(returned.map { Int($0) }) == help)
    }

    /// Every shell command in README.md's `sh` blocks runs as a person would type it, from the
    /// repository's root, with the built `sluice` and `/tmp/` a scratch directory, and succeeds;
    /// but `swift` itself (which `.ci/run` runs: it builds the binary these use) and a line
    /// marked `# as root` (it installs into the system).
    @Test(.timeLimit(.minutes(3)))
    func everyCommandOfTheReadmeRuns() async throws {
        let sandbox = try Sandbox()
        var lines: [String] = []
        var inShell = false
        for line in try Self.read("README.md").split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                inShell = line == "```sh"
            } else if inShell, !line.isEmpty {
                lines.append(String(line))
            }
        }
        let run = lines.filter { !$0.hasPrefix("swift ") && !$0.contains("# as root") }
        #expect(run.count >= 6, "\(lines)")
        for line in run {
            let script = """
                sluice() { "$SLUICE" "$@"; }
                cd '\(Self.root.path)' && \(line.replacingOccurrences(of: "/tmp/", with: sandbox.root + "/"))
                """
            let result = try await CLI.shell(script, in: sandbox)
            #expect(result.status == 0, "\(line): \(result.stderr)")
        }
        // What they made went to the scratch directory, and the tree moved.
        #expect(sandbox.exists("Package.swift") && sandbox.exists("README.md.gz") && sandbox.exists("README.verified"))
        #expect(sandbox.exists("sluice-moved") && !sandbox.exists("sluice-sources"))
    }
}
