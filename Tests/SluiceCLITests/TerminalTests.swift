#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Sluice
@testable import SluiceCLI
import SluiceTestSupport
import Testing

/// The columns a terminal gives `text`, for the characters these tests write: CJK 2, the rest 1
/// (an independent count, not the one under test).
func terminalColumns(_ text: String) -> Int {
    text.unicodeScalars.reduce(0) { $0 + ($1.value >= 0x2E80 ? 2 : 1) }
}

/// What a terminal shows line by line: each redraw (after a `\r`) on its own, `ESC [ K` removed.
func redraws(_ text: String) -> [String] {
    text.replacingOccurrences(of: "\u{1B}[K", with: "")
        .split(whereSeparator: { $0 == "\r" || $0 == "\n" || $0 == "\r\n" })
        .map(String.init)
}

/// C37: the bar fits the terminal, whatever the file name, and draws only in the foreground.
@Suite(.timeLimit(.minutes(4)))
struct TerminalBarTests {
    static let wideName = "データファイルの名前-とても長い名前のテスト.bin"

    /// A 2 MiB copy to a pipe the test drains 256 KiB at a time, waiting after each step for the
    /// bar to be redrawn on a 40-column pseudo-terminal: every line fits in 39 columns (the cursor
    /// never wraps), and the screen gains exactly one line, at the end.
    @Test func barFitsAFortyColumnTerminalAndNeverAddsLines() async throws {
        let sandbox = try Sandbox()
        let size = 2 << 20
        try sandbox.write(pattern(count: size), to: Self.wideName)
        let terminal = try PseudoTerminal(columns: 40)
        let output = try Pipe.make()
        let process = try CLI.start(
            ["copy", "--progress", "--chunk-size", "64K", "--capacity", "1", Self.wideName, "-"], in: sandbox,
            stdout: .descriptor(output.writeEnd), stderr: .descriptor(terminal.terminal))
        output.closeWriteEnd()
        terminal.closeTerminal()
        var received = 0
        while true {
            let count = await onThread { readUpTo(256 << 10, from: output.readEnd) }
            if count == 0 { break }
            received += count
            let seen = terminal.text.count(where: { $0 == "\r" })
            #expect(await terminal.read { text in text.count(where: { $0 == "\r" }) > seen })
        }
        output.closeReadEnd()
        let text = await terminal.readToEnd()
        let result = await process.finish()
        #expect(result.status == 0)
        #expect(received == size)
        let lines = redraws(text)
        #expect(lines.count >= 4, "\(lines)")
        for line in lines {
            #expect(terminalColumns(line) <= 39, "\(terminalColumns(line)) columns: \(line)")
        }
        // The terminal turns the one "\n" into "\r\n"; every other redraw starts with "\r" only.
        #expect(text.filter { $0 == "\r\n" || $0 == "\n" }.count == 1)
        #expect(text.hasSuffix("\r\n"))
        // The name is cut (to 12 columns at the least, "…" included), never left out.
        #expect(lines.allSatisfy { $0.hasPrefix("copy 'デ") && $0.contains("…") }, "\(lines)")
        #expect(lines.last?.contains("100%") == true)
    }

    /// C37's recent rate: a copy from a pipe whose writer stops. The hub publishes nothing while
    /// no byte moves, so the bar itself redraws the stall: its rate falls to `0 B/s` once the
    /// window has passed (events, not time: the test waits for that redraw, whenever it comes).
    @Test func aStalledCopyShowsItsRateFallToZero() async throws {
        let sandbox = try Sandbox()
        let terminal = try PseudoTerminal(columns: 80)
        let input = try Pipe.make()
        let process = try CLI.start(
            ["copy", "--progress", "-", "out"], in: sandbox, stdin: .descriptor(input.readEnd),
            stderr: .descriptor(terminal.terminal))
        input.closeReadEnd()
        terminal.closeTerminal()
        #expect(await onThread { writeAll(String(repeating: "x", count: 4 << 20), to: input.writeEnd) })
        // The last snapshot is published as the last bytes move, with a rate above 0: a redraw
        // that says 0 B/s is the stall drawn again.
        #expect(await terminal.read { text in redraws(text).contains { $0.contains("4.0 MiB") && $0.contains(" 0 B/s") } })
        input.closeWriteEnd()
        let result = await process.finish()
        #expect(result.status == 0)
        #expect(sandbox.contents("out")?.count == 4 << 20)
    }

    /// `script` gives the shell a controlling terminal, `set -m` job control: a job started with
    /// `&` is in a process group of its own, not the terminal's foreground group, and draws
    /// nothing; the same copy in the foreground draws its bar.
    @Test(.enabled(if: Tool.script != nil, "script (util-linux) is not installed: no terminal with job control"))
    func backgroundJobDrawsNothing() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(pattern(count: 3 << 20), to: "big")
        let background = try await CLI.shell(
            #"script -qec 'stty cols 80; set -m; "$SLUICE" copy -f --progress big out & wait $!; echo "exit $?"' /dev/null"#,
            in: sandbox)
        #expect(background.stdoutText.contains("exit 0"), "\(background.stdoutText)")
        #expect(!background.stdoutText.contains("copy 'big'"), "\(background.stdoutText)")
        #expect(sandbox.contents("out")?.count == 3 << 20)

        let foreground = try await CLI.shell(
            #"script -qec 'stty cols 80; set -m; "$SLUICE" copy -f --progress big out; echo "exit $?"' /dev/null"#,
            in: sandbox)
        #expect(foreground.stdoutText.contains("exit 0"), "\(foreground.stdoutText)")
        #expect(foreground.stdoutText.contains("copy 'big'  [========================] 100%"), "\(foreground.stdoutText)")
    }

    /// C45: `TERM=dumb` gets no escape sequence: each redraw is a carriage return and the line
    /// padded with spaces to the width, as `pv` draws there.
    @Test(.enabled(if: Tool.script != nil, "script (util-linux) is not installed: no terminal"))
    func aDumbTerminalGetsNoEscapeSequences() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(pattern(count: 3 << 20), to: "big")
        let result = try await CLI.shell(
            #"script -qec 'stty cols 70; TERM=dumb "$SLUICE" copy --progress --chunk-size 64K --limit-rate 8M big out' /dev/null"#,
            in: sandbox)
        #expect(!result.stdoutText.contains("\u{1B}"), "\(result.stdoutText)")
        let lines = result.stdoutText.split(whereSeparator: { $0 == "\r" || $0 == "\n" || $0 == "\r\n" }).map(String.init)
        #expect(lines.count >= 2, "\(lines)")
        for line in lines { #expect(line.count == 69, "\(line.count): \(line)") }
        #expect(lines.last?.contains("100%") == true, "\(lines)")
    }

    /// A terminal that does not know its width (0 columns): `$COLUMNS`, else 80.
    @Test(.enabled(if: Tool.script != nil, "script (util-linux) is not installed: no terminal to size"))
    func unknownWidthComesFromColumnsElseIsEighty() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(pattern(count: 3 << 20), to: "big")
        let result = try await CLI.shell(#"""
            script -qec 'stty cols 0; COLUMNS=30 "$SLUICE" copy -f --progress big out; echo MARK; unset COLUMNS; "$SLUICE" copy -f --progress big out' /dev/null
            """#, in: sandbox)
        let parts = result.stdoutText.components(separatedBy: "MARK")
        try #require(parts.count == 2, "\(result.stdoutText)")
        let narrow = redraws(parts[0])
        let standard = redraws(parts[1])
        #expect(!narrow.isEmpty && narrow.allSatisfy { $0.count <= 29 }, "\(narrow)")
        #expect(!standard.isEmpty && standard.allSatisfy { $0.count <= 79 }, "\(standard)")
        #expect(standard.last?.contains("[========================] 100%") == true, "\(standard)")
    }
}

/// Reads until `count` bytes or the end; returns how many (blocking: call it from ``onThread(_:)``).
func readUpTo(_ count: Int, from descriptor: Int32) -> Int {
    var buffer = [UInt8](repeating: 0, count: count)
    var total = 0
    while total < count {
        let got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + total, count - total) }
        if got < 0 && errno == EINTR { continue }
        guard got > 0 else { break }
        total += got
    }
    return total
}

/// C37: the bar's layout and rate, on values.
@Suite struct ProgressBarLayoutTests {
    static func snapshot(
        bytes: Int64, total: Int64? = 100 << 20, seconds: Double, averageRate: Double? = nil, isFinal: Bool = false
    ) -> ProgressSnapshot {
        ProgressSnapshot(
            bytesCompleted: bytes, bytesWritten: bytes, totalBytes: total,
            fraction: total.map { Double(bytes) / Double($0) }, elapsed: .milliseconds(Int64(seconds * 1000)),
            bytesPerSecond: averageRate ?? (seconds > 0 ? Double(bytes) / seconds : 0), bufferedBytes: 0,
            peakBufferedBytes: 0, producerSuspended: .zero, isFinal: isFinal)
    }

    /// C39: a source read to its end while the write is still to come (or about to fail) is not
    /// a success: only the last line of a success may say 1.0 or 100%.
    @Test func aSourceReadToItsEndIsShownBelowComplete() {
        let read = ProgressBarLayoutTests.snapshot(bytes: 100 << 20, seconds: 1)
        #expect(read.fraction == 1.0)
        let shown = ProgressDisplay.incomplete(read)
        #expect(shown.fraction == 0.999)
        #expect(!shown.jsonLine().contains("\"fraction\":1.0"))
        #expect(!ProgressDisplay.bar(shown, rate: 1, label: "copy 'a'", columns: 80).contains("100%"))
    }

    @Test(arguments: [1, 10, 20, 30, 40, 60, 80, 120, 200])
    func barFitsEveryWidth(columns: Int) {
        let snapshot = Self.snapshot(bytes: 45 << 20, seconds: 3)
        for label in ["copy 'a'", "copy '\(TerminalBarTests.wideName)'", "decompress '" + String(repeating: "x", count: 150) + "'"] {
            let line = ProgressDisplay.bar(snapshot, rate: Double(15 << 20), label: label, columns: columns)
            #expect(terminalColumns(line) <= max(1, columns - 1), "\(columns): \(line)")
            #expect(line.displayWidth == terminalColumns(line))
        }
    }

    /// 24 cells of bar where there is room; in 80 columns the bar narrows before anything goes.
    @Test func wideBarShowsEverything() {
        let snapshot = Self.snapshot(bytes: 45 << 20, seconds: 3)
        let wide = ProgressDisplay.bar(snapshot, rate: Double(15 << 20), label: "copy 'a'", columns: 120)
        #expect(wide == "copy 'a'  [==========>             ]  45%  45.0 MiB / 100.0 MiB  15.0 MiB/s  ETA 0:04")
        let standard = ProgressDisplay.bar(snapshot, rate: Double(15 << 20), label: "copy 'a'", columns: 80)
        #expect(standard == "copy 'a'  [=======>        ]  45%  45.0 MiB / 100.0 MiB  15.0 MiB/s  ETA 0:04")
    }

    /// C45: as the terminal narrows, whole fields go in a fixed order (the ETA, the rate, the
    /// bar), then the name is shortened with its closing quote kept; a number is never cut;
    /// below ``ProgressDisplay/minimumColumns`` only the percent is drawn.
    @Test func fieldsGoWholeInAFixedOrderThenTheNameIsShortened() {
        let snapshot = Self.snapshot(bytes: 45 << 20, seconds: 3)
        let label = "copy '" + String(repeating: "n", count: 40) + "'"
        var gone: [String] = []
        for columns in (1...140).reversed() {
            let line = ProgressDisplay.bar(snapshot, rate: Double(15 << 20), label: label, columns: columns)
            #expect(line.displayWidth <= max(1, columns - 1), "\(columns): \(line)")
            if columns < ProgressDisplay.minimumColumns {
                #expect(line == "45%" || line.isEmpty, "\(columns): \(line)")
                continue
            }
            let present = ["ETA 0:04": line.contains("ETA 0:04"), "15.0 MiB/s": line.contains("15.0 MiB/s"), "[": line.contains("[")]
            for (field, isThere) in present where !isThere && !gone.contains(field) { gone.append(field) }
            for field in gone { #expect(present[field] == false, "\(columns): \(field) came back: \(line)") }
            if line != "45%" {
                #expect(line.contains(" 45%  45.0 MiB / 100.0 MiB"), "\(columns): \(line)")
                if line.hasPrefix(label) { continue }
                // Shortened only once the three fields are gone, its closing quote kept.
                #expect(gone.count == 3 && line.hasPrefix("copy '") && line.contains("…'"), "\(columns): \(line)")
            }
        }
        #expect(gone == ["ETA 0:04", "15.0 MiB/s", "["])
    }

    /// C55: `sluice compress > x.gz` with a terminal as standard input reads what is typed, to
    /// the end of input (Ctrl-D), as the Command line article and gzip say.
    @Test func compressWithNoOperandReadsATerminal() async throws {
        let sandbox = try Sandbox()
        let terminal = try PseudoTerminal(columns: 80)
        let process = try CLI.start(["compress"], in: sandbox, stdin: .descriptor(terminal.terminal))
        terminal.closeTerminal()
        // A line, then Ctrl-D at the start of the next: the end of input, in canonical mode.
        _ = "hello\n\u{4}".withCString { write(terminal.master, $0, 7) }
        let result = await process.finish()
        #expect(result.status == 0, "\(result.stderr)")
        try sandbox.write(result.stdout, to: "x.gz")
        let decoded = try await CLI.shell("gzip -dc x.gz", in: sandbox)
        #expect(decoded.stdoutText == "hello\n", "\(decoded.stderr)")
    }

    /// The last line of an operation that did not complete: what was committed, and why it
    /// ended, with no rate.
    @Test func anIncompleteEndingShowsWhatWasCommitted() {
        var snapshot = Self.snapshot(bytes: 100 << 20, seconds: 3, isFinal: true)
        snapshot.bytesCommitted = 25 << 20
        snapshot.files = ProgressSnapshot.FileCounts(completed: 4, failed: 1, total: 4)
        snapshot.filesCommitted = 1
        let failed = ProgressDisplay.bar(snapshot, rate: 1, label: "copy 4 files", columns: 120, ending: .failed("x"))
        #expect(failed == "copy 4 files  [======>                 ]  25%  1/4 files (1 failed)  25.0 MiB / 100.0 MiB committed  failed")
        let interrupted = ProgressDisplay.line(snapshot, rate: 1, label: "copy 4 files", ending: .interrupted)
        #expect(interrupted == "copy 4 files: 25% 1/4 files, 25.0 MiB of 100.0 MiB committed, interrupted")
    }

    /// C57 (d): an output written in place (standard output) was out as it went: the last line
    /// of an interrupted decompression says what it wrote, not "0 B committed".
    @Test func anIncompleteEndingInPlaceShowsWhatWasWritten() {
        var snapshot = Self.snapshot(bytes: 30 << 20, seconds: 3, isFinal: true)
        snapshot.bytesWritten = 12 << 20
        snapshot.bytesCommitted = 0
        let bar = ProgressDisplay.bar(
            snapshot, rate: 1, label: "decompress '-'", columns: 120, ending: .interrupted, inPlace: true)
        #expect(bar == "decompress '-'  12.0 MiB written  interrupted")
        let line = ProgressDisplay.line(snapshot, rate: 1, label: "decompress '-'", ending: .interrupted, inPlace: true)
        #expect(line == "decompress '-': 12.0 MiB written, interrupted")
    }

    @Test func doubleWidthCharactersAreCutWhole() {
        #expect("データ".displayWidth == 6)
        #expect("e\u{301}".displayWidth == 1)
        #expect("データ".truncated(toColumns: 4) == "デ…")
        #expect("データ".truncated(toColumns: 6) == "データ")
        #expect("a\u{1B}[2Jb\n".replacingControlCharacters == "a?[2Jb?")
    }

    /// 10 s at 10 MiB/s, a 60 s stall, then 10 MiB/s again: after 5 s the recent rate is back
    /// at 10 MiB/s (the ETA with it), while the average since the start is still 1/5 of that.
    @Test func recentRateRecoversAfterAStall() {
        var recent = RecentRate()
        let mebibyte: Int64 = 1 << 20
        for second in 0...10 { _ = recent.record(Self.snapshot(bytes: Int64(second) * 10 * mebibyte, total: 1 << 30, seconds: Double(second))) }
        let stalled = recent.record(Self.snapshot(bytes: 100 * mebibyte, total: 1 << 30, seconds: 70))
        #expect(stalled == 0)
        var rate = 0.0
        var last = Self.snapshot(bytes: 0, seconds: 0)
        for second in 71...76 {
            last = Self.snapshot(bytes: (100 + Int64(second - 70) * 10) * mebibyte, total: 1 << 30, seconds: Double(second))
            rate = recent.record(last)
        }
        #expect(abs(rate - 10 * 1_048_576) < 1)
        #expect(last.bytesPerSecond < 3 * 1_048_576)
        #expect(ProgressDisplay.eta(last, rate: rate) == "1:27")  // 864 MiB left at 10 MiB/s
    }
}
