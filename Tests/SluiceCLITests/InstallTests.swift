#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Sluice
@testable import SluiceCLI
import SluiceTestSupport
import Testing

/// What an installation uses: the completion scripts and the manual page generated from the
/// option table, `--version`, and `sluice help CMD`.
@Suite(.timeLimit(.minutes(3)))
struct InstallTests {
    static let hasBash = FileManager.default.isExecutableFile(atPath: "/bin/bash")
    static let zsh = ["/bin/zsh", "/usr/bin/zsh"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let groff = ["/usr/bin/groff"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test(arguments: [["copy"], ["compress"], ["decompress"], ["bench"], []])
    func helpCommandPrintsWhatDashDashHelpPrints(command: [String]) async throws {
        let sandbox = try Sandbox()
        let viaHelp = try await CLI.run(["help"] + command, in: sandbox)
        let viaOption = try await CLI.run(command + ["--help"], in: sandbox)
        #expect(viaHelp.status == 0 && viaOption.status == 0)
        #expect(viaHelp.stdout.count > 200)
        #expect(viaHelp.stdout == viaOption.stdout)
        #expect(viaHelp.stderr.isEmpty && viaOption.stderr.isEmpty)
    }

    @Test(arguments: [[], ["copy"], ["decompress"]])
    func versionNamesTheZlibInUse(command: [String]) async throws {
        let result = try await CLI.run(command + ["--version"], in: try Sandbox())
        #expect(result.status == 0)
        #expect(result.stdoutText == "sluice \(SluiceMain.version) (zlib \(Zlib.version))\n")
        #expect(Zlib.version.split(separator: ".").count >= 3, "\(Zlib.version)")
    }

    // MARK: bash

    /// Runs the bash completion for the command line `words` (the last one is the word being
    /// completed) in `sandbox`, and returns what it offers, sorted.
    static func bashCompletions(_ words: [String], in sandbox: Sandbox) async throws -> [String] {
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let result = try await CLI.shell(
            """
            "$SLUICE" --generate-completion-script bash > sluice.bash || exit 1
            exec bash -c '. ./sluice.bash && COMP_WORDS=("$@") && COMP_CWORD=$(($# - 1)) && _sluice && printf "%s\\n" "${COMPREPLY[@]}"' _ \(quoted)
            """, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdoutText.split(separator: "\n").map(String.init).filter { !$0.isEmpty }.sorted()
    }

    /// The words of the table that complete `prefix` for `command`.
    static func fromTable(_ command: CommandName, _ prefix: String) -> [String] {
        CommandOption.listed(for: command).flatMap(\.spellings).filter { $0.hasPrefix(prefix) }.sorted()
    }

    @Test(.enabled(if: hasBash, "bash is not installed"))
    func theBashScriptIsValidBash() async throws {
        let result = try await CLI.shell(
            #""$SLUICE" --generate-completion-script bash > sluice.bash && bash -n sluice.bash"#, in: try Sandbox())
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test(.enabled(if: hasBash, "bash is not installed"), arguments: [
        (["sluice", "copy", "--re"], CommandName.copy, "--re"),
        (["sluice", "copy", "--pr"], .copy, "--pr"),
        (["sluice", "copy", "-"], .copy, "-"),
        (["sluice", "compress", "--"], .compress, "--"),
        (["sluice", "compress", "-d", "--"], .decompress, "--"),
        (["sluice", "compress", "--list", "--m"], .decompress, "--m"),
        (["sluice", "decompress", "-"], .decompress, "-"),
        (["sluice", "bench", "--"], .bench, "--"),
        (["sluice", "-"], .sluice, "-"),
    ])
    func bashOffersTheOptionsThatExist(words: [String], command: CommandName, prefix: String) async throws {
        let offered = try await Self.bashCompletions(words, in: try Sandbox())
        #expect(offered == Self.fromTable(command, prefix))
        #expect(!offered.contains("-N") && !offered.contains("--name"), "a refused option is not offered")
    }

    @Test(.enabled(if: hasBash, "bash is not installed"))
    func bashCompletesSubcommandsValuesAndFiles() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("x", to: "abc.txt")
        #expect(try await Self.bashCompletions(["sluice", ""], in: sandbox) == ["bench", "compress", "copy", "decompress", "follow", "help"])
        #expect(try await Self.bashCompletions(["sluice", "help", "c"], in: sandbox) == ["compress", "copy"])
        #expect(try await Self.bashCompletions(["sluice", "copy", "ab"], in: sandbox) == ["abc.txt"])
        #expect(try await Self.bashCompletions(["sluice", "copy", "--re"], in: sandbox) == [
            "--recursive", "--reflink", "--reflink=always", "--reflink=auto", "--reflink=never",
        ])
        #expect(try await Self.bashCompletions(["sluice", "compress", "-o", "a"], in: sandbox) == ["abc.txt"])
        #expect(try await Self.bashCompletions(["sluice", "copy", "--chunk-size", ""], in: sandbox) == [])
        #expect(try await Self.bashCompletions(["sluice", "--generate-completion-script", ""], in: sandbox) == ["bash", "zsh"])
        #expect(try await Self.bashCompletions(["sluice", "bench", "--design", "push"], in: sandbox) == ["push-fail", "push-spill"])
        // --progress takes its value only after '=' (bash splits the word there).
        #expect(try await Self.bashCompletions(["sluice", "copy", "--progress", "="], in: sandbox) == ["json"])
        #expect(try await Self.bashCompletions(["sluice", "copy", "--progress", "j"], in: sandbox) == [])
    }

    // MARK: zsh

    @Test(.enabled(if: zsh != nil, "zsh is not installed (apt-get install zsh)"))
    func theZshScriptIsValidZsh() async throws {
        let result = try await CLI.shell(
            #""$SLUICE" --generate-completion-script zsh > _sluice && zsh -n _sluice"#, in: try Sandbox())
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// Every option of every command is in the zsh script, and the refused one is not.
    @Test func theZshScriptNamesEveryOption() {
        let script = CompletionScript(shell: "zsh").render()
        #expect(script.hasPrefix("#compdef sluice\n"))
        for command in [CommandName.sluice] + SluiceMain.subcommands {
            for option in CommandOption.listed(for: command) {
                #expect(script.contains("'--\(option.long)") || script.contains(" --\(option.long)"), "\(option.long)")
            }
        }
        #expect(!script.contains("--name"))
    }

    // MARK: the manual

    @Test(.enabled(if: groff != nil, "groff is not installed"))
    func theManualPageFormatsWithoutWarnings() async throws {
        let result = try await CLI.shell(
            #""$SLUICE" --generate-manual > sluice.1 && groff -man -ww -z sluice.1 && groff -man -Tutf8 sluice.1 > page.txt"#,
            in: try Sandbox())
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty, "\(result.stderr)")
    }

    @Test func theManualPageDescribesEveryCommandAndOption() {
        let page = ManualPage().render()
        #expect(page.hasPrefix(".TH SLUICE 1 "))
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "\"SEE ALSO\""] {
            #expect(page.contains("\n.SH \(section)\n"), "\(section)")
        }
        for command in SluiceMain.subcommands {
            #expect(page.contains("\n.SS \"sluice \(command.rawValue)\"\n"))
        }
        for command in [CommandName.sluice] + SluiceMain.subcommands {
            for option in CommandOption.listed(for: command) {
                #expect(page.contains(#"\fB"# + ManualPage.escaped(option.label) + #"\fR"#), "\(option.label)")
            }
        }
        #expect(!page.contains(#"\-\-name"#))
        // No line starts with a control character it did not mean.
        for line in page.split(separator: "\n") where line.hasPrefix(".") {
            #expect([".TH", ".SH", ".SS", ".PP", ".TP", ".BR", ".br"].contains(String(line.prefix(3))), "\(line)")
        }
    }
}
