import Foundation
import SluiceTestSupport
import Testing
@testable import Sluice

@Suite struct ProgressSnapshotTests {
    static let keys = [
        "bytesCompleted", "bytesWritten", "totalBytes", "fraction", "elapsedSeconds",
        "bytesPerSecond", "bufferedBytes", "peakBufferedBytes", "producerSuspendedSeconds", "bytesCommitted",
        "filesCommitted",
    ]

    static func snapshot(total: Int64? = 400, fraction: Double? = 0.25) -> ProgressSnapshot {
        ProgressSnapshot(
            bytesCompleted: 100, bytesWritten: 90, totalBytes: total, fraction: fraction,
            elapsed: .milliseconds(500), bytesPerSecond: 200, bufferedBytes: 10,
            peakBufferedBytes: 64, producerSuspended: .milliseconds(250), isFinal: false
        )
    }

    /// Parses `line` with Foundation, proving it is well-formed JSON with one top-level object.
    func parse(_ line: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
        return try #require(object as? [String: Any])
    }

    @Test func intermediateLineHasExactKeysInOrder() throws {
        let line = Self.snapshot().jsonLine()
        #expect(line == #"{"bytesCompleted":100,"bytesWritten":90,"totalBytes":400,"fraction":0.25,"#
            + #""elapsedSeconds":0.5,"bytesPerSecond":200.0,"bufferedBytes":10,"peakBufferedBytes":64,"#
            + #""producerSuspendedSeconds":0.25,"bytesCommitted":0,"filesCommitted":0}"#)
        #expect(!line.contains("\n"))
        let object = try parse(line)
        #expect(Set(object.keys) == Set(Self.keys))
        #expect(object["bytesCompleted"] as? Int == 100)
        #expect(object["fraction"] as? Double == 0.25)
    }

    @Test func unknownTotalAndFractionAreNull() throws {
        let line = Self.snapshot(total: nil, fraction: nil).jsonLine()
        #expect(line.contains(#""totalBytes":null,"fraction":null"#))
        let object = try parse(line)
        #expect(object["totalBytes"] is NSNull)
        #expect(object["fraction"] is NSNull)
    }

    @Test func doneLineAddsDone() throws {
        let line = Self.snapshot().jsonLine(done: true)
        #expect(line.hasSuffix(#","done":true}"#))
        let object = try parse(line)
        #expect(Set(object.keys) == Set(Self.keys + ["done"]))
        #expect(object["done"] as? Bool == true)
    }

    @Test func errorLineAddsDoneAndError() throws {
        let line = Self.snapshot().jsonLine(error: "cannot write 'out': File too large")
        #expect(line.hasSuffix(#","done":true,"error":"cannot write 'out': File too large"}"#))
        let object = try parse(line)
        #expect(Set(object.keys) == Set(Self.keys + ["done", "error"]))
        #expect(object["error"] as? String == "cannot write 'out': File too large")
    }

    @Test(arguments: [
        ("say \"hi\"", #""say \"hi\"""#),
        (#"C:\dir"#, #""C:\\dir""#),
        ("a\nb\tc\r", #""a\u000Ab\u0009c\u000D""#),
        ("\u{0}\u{1F}", #""\u0000\u001F""#),
        ("café ☕️ 😀", "\"café ☕️ 😀\""),
        ("", #""""#),
    ])
    func errorMessagesAreEscaped(message: String, encoded: String) throws {
        let line = Self.snapshot().jsonLine(error: message)
        #expect(line.hasSuffix(#""error":"# + encoded + "}"))
        let object = try parse(line)
        #expect(object["error"] as? String == message)
    }

    /// A snapshot about one file named by `bytes`.
    static func snapshot(naming bytes: [UInt8]) -> ProgressSnapshot {
        var snapshot = snapshot()
        snapshot.files = ProgressSnapshot.FileCounts(completed: 1, total: 2, current: Pathname(bytes: bytes), currentIndex: 0)
        return snapshot
    }

    /// The `file` field is the name: valid UTF-8 as characters (escaped as JSON escapes them),
    /// each other byte as `\udcXX`, Python's `surrogateescape` (truncated, overlong and
    /// surrogate sequences included).
    @Test(arguments: [
        (Array("café ☕️".utf8), "\"café ☕️\""),
        ([0x61, 0xFF, 0x62], #""a\udcffb""#),
        ([0xC3], #""\udcc3""#),
        ([0xC0, 0xAF], #""\udcc0\udcaf""#),
        ([0xED, 0xA0, 0x80], #""\udced\udca0\udc80""#),
        ([0xF4, 0x90, 0x80, 0x80], #""\udcf4\udc90\udc80\udc80""#),
        ([0xE2, 0x82, 0x41], #""\udce2\udc82A""#),
        (Array("a\"b\\c\n".utf8), #""a\"b\\c\u000A""#),
    ])
    func fileNamesAreNamesInJSON(bytes: [UInt8], encoded: String) throws {
        let line = Self.snapshot(naming: bytes).jsonLine()
        #expect(line.hasSuffix(#","file":"# + encoded + "}"), "\(line)")
    }

    /// Python's `json.loads` and `os.fsencode` give back the exact bytes of every name.
    @Test(.enabled(if: Tool.find("python3") != nil, "python3 is not installed"))
    func fileNamesRoundTripThroughPython() async throws {
        let names: [[UInt8]] = [[0x61, 0xFF, 0x62], [0xC3], [0xED, 0xA0, 0x80], Array("ñ\t\"x\\".utf8), [0x80, 0x80, 0xFE]]
        let lines = names.map { Self.snapshot(naming: $0).jsonLine() }.joined(separator: "\n") + "\n"
        let script = "import sys, json, os\nfor line in sys.stdin:\n    print(os.fsencode(json.loads(line)['file']).hex())"
        let result = try await Tool.run(Tool.find("python3")!, ["-c", script], input: Array(lines.utf8))
        #expect(result.status == 0)
        let expected = names.map { $0.map { String(format: "%02x", $0) }.joined() }
        #expect(String(decoding: result.output, as: UTF8.self).split(separator: "\n").map(String.init) == expected)
    }

    @Test func nonFiniteNumbersAreWrittenAsZero() throws {
        var snapshot = Self.snapshot()
        snapshot.bytesPerSecond = .infinity
        snapshot.fraction = .nan
        let line = snapshot.jsonLine()
        #expect(line.contains(#""fraction":0,"#))
        #expect(line.contains(#""bytesPerSecond":0,"#))
        _ = try parse(line)
    }

    @Test(arguments: [1e-7, 1e21, 123_456_789.125, 0, 1])
    func doublesAreValidJSONNumbers(value: Double) throws {
        var snapshot = Self.snapshot()
        snapshot.bytesPerSecond = value
        let object = try parse(snapshot.jsonLine())
        #expect((object["bytesPerSecond"] as? NSNumber)?.doubleValue == value)
    }

    @Test func trackerFinalSnapshotRoundTrips() throws {
        let start = ContinuousClock.now
        var tracker = ProgressTracker(totalBytes: 0, clock: start)
        let final = tracker.finalSnapshot(bytesCompleted: 0, bytesWritten: 20, bufferedBytes: 0,
                                          peakBufferedBytes: 0, producerSuspended: .zero, now: start)
        let object = try parse(final.jsonLine(done: true))
        #expect(object["totalBytes"] as? Int == 0)
        #expect(object["fraction"] as? Double == 1.0)
        #expect(object["bytesPerSecond"] as? Double == 0)
        #expect(object["done"] as? Bool == true)
    }
}
