import SluiceTestSupport
import Testing

/// Messages and exit statuses of the README's table: 0, 1, 64.
@Suite(.timeLimit(.minutes(3)))
struct ExitStatusTests {
    @Test func missingSourceFailsWithTheErrnoMessage() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.run(["copy", "x", "y"], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr == "sluice: cannot open 'x': No such file or directory\n")
        #expect(result.stdout.isEmpty)
        #expect(sandbox.listing().isEmpty)
    }

    /// As swift-argument-parser: the message, the command's usage, and where to get help.
    @Test func unknownOptionIsBadUsageWithTheUsageAndAHintToHelp() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("a", to: "a")
        let result = try await CLI.run(["copy", "--bogus", "a", "b"], in: sandbox)
        #expect(result.status == 64)
        #expect(result.stderr == """
            Error: unknown option '--bogus'
            Usage: sluice copy [<options>] <source> <destination>
              See 'sluice copy --help' for more information.

            """)
        #expect(result.stdout.isEmpty)
        #expect(!sandbox.exists("b"))
    }

    @Test(arguments: [["frobnicate"], ["--bogus"], ["help", "frobnicate"]])
    func unknownCommandIsBadUsageWithTheTopLevelUsage(arguments: [String]) async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.run(arguments, in: sandbox)
        #expect(result.status == 64)
        #expect(result.stderrLines.count == 3, "\(result.stderr)")
        #expect(result.stderrLines.first == "Error: unknown \(arguments[0] == "--bogus" ? "option" : "command") '\(arguments.last!)'")
        #expect(result.stderrLines.dropFirst().first == "Usage: sluice <subcommand>")
        #expect(result.stderrLines.last == "  See 'sluice --help' for more information.")
    }

    /// Every usage error of a command shows that command's usage: the first of its help.
    @Test(arguments: [
        (["compress", "-0", "a"], "compress"),
        (["decompress", "-t", "-c", "a.gz"], "decompress"),
        (["compress", "--rm", "-c", "a"], "compress"),
        (["bench", "--runs", "0"], "bench"),
        (["copy", "a", "b", "c"], "copy"),
    ])
    func usageErrorNamesTheCommandsUsage(arguments: [String], command: String) async throws {
        let sandbox = try Sandbox()
        try sandbox.write("a", to: "a")
        let help = try await CLI.run([command, "--help"], in: sandbox)
        let usage = try #require(help.stdoutText.split(separator: "\n").first(where: { $0.hasPrefix("USAGE: ") }))
        let result = try await CLI.run(arguments, in: sandbox)
        #expect(result.status == 64)
        let lines = result.stderrLines
        #expect(lines.count == 3, "\(result.stderr)")
        #expect(lines.first?.hasPrefix("Error: ") == true)
        #expect(lines.dropFirst().first == "Usage: " + usage.dropFirst("USAGE: ".count))
        #expect(lines.last == "  See 'sluice \(command) --help' for more information.")
        #expect(sandbox.listing() == ["a"])
    }

    @Test(arguments: [
        ["copy", "--capacity", "0", "a", "b"],
        ["copy", "--capacity=0", "a", "b"],
        ["copy", "--chunk-size", "0", "a", "b"],
        ["copy", "--chunk-size", "lots", "a", "b"],
        ["copy", "--capacity"],
        ["copy", "a"],
        ["copy"],
        [],
    ])
    func badUsageExitsWith64(arguments: [String]) async throws {
        let sandbox = try Sandbox()
        try sandbox.write("a", to: "a")
        let result = try await CLI.run(arguments, in: sandbox)
        #expect(result.status == 64)
        if !arguments.isEmpty {
            #expect(result.stderr.hasPrefix("Error: "))
            #expect(result.stderr.contains("\nUsage: sluice copy "))
        }
        #expect(!sandbox.exists("b"))
    }

    @Test(arguments: [["--help"], ["copy", "--help"], ["copy", "-h"]])
    func helpGoesToStandardOutput(arguments: [String]) async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.run(arguments, in: sandbox)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        let text = result.stdoutText
        #expect(text.hasPrefix("OVERVIEW: "))
        #expect(text.contains("\nUSAGE: sluice"))
        #expect(text.contains("\nOPTIONS:\n"))
    }

    @Test(arguments: [["--version"], ["copy", "--version"]])
    func versionExitsWith0(arguments: [String]) async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.run(arguments, in: sandbox)
        #expect(result.status == 0)
        #expect(result.stdoutText.hasPrefix("sluice "))
        #expect(result.stderr.isEmpty)
    }

    @Test func existingDestinationIsRefusedWithoutForce() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("new\n", to: "source")
        try sandbox.write("old\n", to: "destination")
        let result = try await CLI.run(["copy", "source", "destination"], in: sandbox)
        #expect(result.status == 1)
        // The library's message, and the command's hint after it.
        #expect(result.stderr.contains("cannot create 'destination': File exists (use --force to overwrite)"), "\(result.stderr)")
        #expect(sandbox.text("destination") == "old\n")
        #expect(sandbox.leftovers().isEmpty)
    }

    @Test(arguments: ["-f", "--force"])
    func existingDestinationIsReplacedWithForce(flag: String) async throws {
        let sandbox = try Sandbox()
        try sandbox.write("new\n", to: "source")
        try sandbox.write("old bytes, longer\n", to: "destination")
        let result = try await CLI.run(["copy", flag, "source", "destination"], in: sandbox)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        #expect(sandbox.text("destination") == "new\n")
        #expect(sandbox.leftovers().isEmpty)
    }
}
