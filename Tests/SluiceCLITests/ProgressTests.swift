#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// One `--progress=json` line, parsed by Foundation.
struct ProgressLine: @unchecked Sendable {
    static let keys: Set<String> = [
        "bytesCompleted", "bytesWritten", "totalBytes", "fraction", "elapsedSeconds",
        "bytesPerSecond", "bufferedBytes", "peakBufferedBytes", "producerSuspendedSeconds", "bytesCommitted",
        "filesCommitted",
    ]

    let text: String
    let object: [String: Any]

    init(_ text: String) throws {
        self.text = text
        let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8))
        object = try #require(parsed as? [String: Any], "not a JSON object: \(text)")
    }

    var isDone: Bool { object["done"] as? Bool == true }
    var totalIsUnknown: Bool { object["totalBytes"] is NSNull }
    var fraction: Double? { object["fraction"] as? Double }
    func integer(_ key: String) -> Int64? { (object[key] as? NSNumber)?.int64Value }
}

@Suite(.timeLimit(.minutes(3)))
struct ProgressJSONTests {
    @Test func everyLineIsAJSONSnapshotAndTheLastIsDone() async throws {
        let sandbox = try Sandbox()
        let size = 5 * 1024 * 1024 + 3
        try sandbox.write(pattern(count: size), to: "source")
        let result = try await CLI.run(
            ["copy", "--progress=json", "--chunk-size", "64K", "--no-fsync", "source", "copy"], in: sandbox)
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasSuffix("\n"))
        let lines = try result.stderrLines.map(ProgressLine.init)
        try #require(!lines.isEmpty)
        var previousFraction = 0.0
        for line in lines {
            #expect(Self.keysMatch(line), "\(line.text)")
            #expect(line.integer("totalBytes") == Int64(size))
            if let fraction = line.fraction {
                #expect((0...1).contains(fraction))
                #expect(fraction >= previousFraction)
                previousFraction = fraction
            }
        }
        #expect(lines.dropLast().allSatisfy { !$0.isDone })
        let last = try #require(lines.last)
        #expect(last.isDone)
        #expect(last.object["error"] == nil)
        #expect(last.fraction == 1.0)
        #expect(last.integer("bytesCompleted") == Int64(size))
        #expect(last.integer("bytesWritten") == Int64(size))
        #expect(sandbox.contents("copy")?.count == size)
    }

    @Test func emptyFileEndsAtFractionOne() async throws {
        let sandbox = try Sandbox()
        try sandbox.write([], to: "empty")
        let result = try await CLI.run(["copy", "--progress=json", "empty", "copy"], in: sandbox)
        #expect(result.status == 0)
        let last = try ProgressLine(try #require(result.stderrLines.last))
        #expect(last.isDone)
        #expect(last.fraction == 1.0)
        #expect(last.integer("totalBytes") == 0)
    }

    @Test func failureBeforeTheCopyStartsStillEndsWithADoneLineAndTheError() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("new", to: "source")
        try sandbox.write("old", to: "destination")
        let result = try await CLI.run(["copy", "--progress=json", "source", "destination"], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderrLines.count == 2)
        let object = try #require(
            JSONSerialization.jsonObject(with: Data(result.stderrLines[0].utf8)) as? [String: Any])
        #expect(object["done"] as? Bool == true)
        #expect((object["error"] as? String)?.hasPrefix("cannot create 'destination'") == true)
        #expect(object["bytesCompleted"] as? Int == 0)
        #expect(result.stderrLines[1].hasPrefix("sluice: cannot create 'destination'"))
        #expect(sandbox.text("destination") == "old")
    }

    static func keysMatch(_ line: ProgressLine) -> Bool {
        var expected = ProgressLine.keys
        if line.isDone { expected.insert("done") }
        if line.object["error"] != nil { expected.insert("error") }
        return Set(line.object.keys) == expected
    }
}

@Suite(.timeLimit(.minutes(3)))
struct VerboseReportTests {
    @Test func reportCarriesTheCRC32OfTheData() async throws {
        let sandbox = try Sandbox()
        let data = pattern(count: 1_234_567)
        try sandbox.write(data, to: "source")
        let result = try await CLI.run(["copy", "-v", "--pipeline", "source", "copy"], in: sandbox)
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
        let expected = try await Self.referenceCRC32(of: "source", data: data, in: sandbox)
        let report = try #require(result.stderrLines.last)
        #expect(report.hasPrefix("sluice: copy 'source' to 'copy': "))
        #expect(report.contains("1234567 bytes read"))
        #expect(report.contains("1234567 bytes written"))
        #expect(report.contains("CRC-32 \(expected)"), "\(report)")
        // The pipeline: the data passes through sluice, hence the CRC-32.
        #expect(report.contains(", by pipeline, "), "\(report)")
    }

    /// The CRC-32 as `gzip` stores it in its trailer (the first 4 of the last 8 bytes,
    /// little-endian), in 8 lowercase hex digits; a bitwise computation where `gzip` is missing.
    static func referenceCRC32(of name: String, data: [UInt8], in sandbox: Sandbox) async throws -> String {
        var crc: UInt32
        let gzip = try await CLI.shell("gzip -c \(name) > \(name).gz", in: sandbox)
        if gzip.status == 0, let compressed = sandbox.contents("\(name).gz"), compressed.count >= 18 {
            let trailer = compressed.suffix(8)
            crc = trailer.prefix(4).enumerated().reduce(0) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
        } else {
            crc = 0xFFFF_FFFF
            for byte in data {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            }
            crc ^= 0xFFFF_FFFF
        }
        let digits = String(crc, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
