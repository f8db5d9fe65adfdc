import SluiceTestSupport
import Testing

/// `--rm` never loses a write: a source open for writing in another process is kept, with a
/// warning naming why (exit 2); a log appended to while it is compressed loses no line, kept
/// when it changed after it was read, removed only when its copy holds all of it.
@Suite(.timeLimit(.minutes(2)))
struct MoveRuleTests {
    @Test func aSourceOpenForWritingElsewhereIsKept() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(String(repeating: "line\n", count: 1000), to: "log")
        // The writer holds the log open (as a logging daemon does) until its input ends; it says
        // so before the command starts.
        let result = try await CLI.shell(
            #"""
            mkfifo hold ready
            ( exec 3>>log; echo open > ready; read line < hold ) &
            read opened < ready
            exec 4>hold
            "$SLUICE" compress --rm log; status=$?
            exec 4>&-
            wait
            exit $status
            """#, in: sandbox)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("kept 'log': another process has it open for writing"), "\(result.stderr)")
        #expect(sandbox.exists("log") && sandbox.exists("log.gz"))
    }

    /// A writer appending numbered lines, one `open(2)` per line, while the log is compressed
    /// with `--rm`: every line is in the log left or in the archive; the log is removed only if
    /// the archive holds every line it had.
    @Test(arguments: 0..<3)
    func anActiveLogLosesNoLine(round: Int) async throws {
        let sandbox = try Sandbox()
        try sandbox.write(String(repeating: "0 preamble of some length\n", count: 40_000), to: "log")
        let result = try await CLI.shell(
            #"""
            ( i=1; while [ $i -le 3000 ]; do echo "line $i" >> log; i=$((i + 1)); done ) &
            "$SLUICE" compress --rm log; status=$?
            wait
            gzip -dc log.gz > archived
            [ -e log ] && cat log >> archived
            for i in $(seq 1 3000); do echo "line $i"; done > expected
            grep '^line ' archived | sort -u -t ' ' -k 2n > found
            cmp expected found || exit 9
            exit $status
            """#, in: sandbox)
        #expect(result.status == 0 || result.status == 2, "\(result.stderr)")
        if result.status == 2 {
            #expect(result.stderr.contains("kept 'log':"), "\(result.stderr)")
        }
    }
}
