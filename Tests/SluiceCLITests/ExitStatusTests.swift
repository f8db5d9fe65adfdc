import Testing

/// Messages and exit statuses of the README's table: 0, 1, 64.
@Suite(.timeLimit(.minutes(1)))
struct ExitStatusTests {
    @Test func missingSourceFailsWithTheErrnoMessage() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.run(["copy", "x", "y"], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr == "sluice: cannot open 'x': No such file or directory\n")
        #expect(result.stdout.isEmpty)
        #expect(sandbox.listing().isEmpty)
    }

    @Test func unknownOptionIsBadUsageWithAHintToHelp() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("a", to: "a")
        let result = try await CLI.run(["copy", "--bogus", "a", "b"], in: sandbox)
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("sluice: unknown option '--bogus'"))
        #expect(result.stderr.contains("--help"))
        #expect(!sandbox.exists("b"))
    }

    @Test func unknownCommandIsBadUsage() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.run(["frobnicate"], in: sandbox)
        #expect(result.status == 64)
        #expect(result.stderr.contains("--help"))
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
        #expect(result.stderr.hasPrefix("sluice: ") || arguments.isEmpty)
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
        #expect(text.contains("\nUSAGE:\n"))
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
        #expect(result.stderr.contains("'destination'"))
        #expect(result.stderr.contains("--force"))
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
