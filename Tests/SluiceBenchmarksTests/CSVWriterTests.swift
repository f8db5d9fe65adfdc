import Sluice
@testable import SluiceBenchmarks
import Testing

@Suite struct CSVWriterTests {
    static func run(_ design: BenchmarkDesign, _ consumer: BenchmarkConsumer, outcome: BenchmarkOutcome = .ok) -> BenchmarkRun {
        BenchmarkRun(
            design: design, consumer: consumer, bytesMoved: 256 << 20, seconds: 0.5, peakResidentBytes: 30 << 20,
            peakBufferedBytes: 4 << 20, outcome: outcome,
            samples: [MemorySample(seconds: 0, residentBytes: 10 << 20, bufferedBytes: 0),
                      MemorySample(seconds: 0.25, residentBytes: 30 << 20, bufferedBytes: 4 << 20)])
    }

    /// Splits RFC 4180 text into records of fields (quoted fields may hold commas, quotes, newlines).
    static func parse(_ text: String) -> [[String]] {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var quoted = false
        var characters = Array(text)
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if quoted {
                if character == "\"" {
                    if index + 1 < characters.count && characters[index + 1] == "\"" {
                        field.append("\"")
                        index += 1
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(character)
                }
            } else if character == "\"" {
                quoted = true
            } else if character == "," {
                record.append(field)
                field = ""
            } else if character == "\r\n" || character == "\n" {
                record.append(field)
                records.append(record)
                record = []
                field = ""
            } else {
                field.append(character)
            }
            index += 1
        }
        characters.removeAll()
        return records
    }

    @Test func headerAndOneRowPerRun() {
        let runs = [Self.run(.unboundedStream, .fast), Self.run(.boundedPull, .slow), Self.run(.pushFail, .slow, outcome: .capacityExceeded)]
        let records = Self.parse(CSVWriter.csv(for: runs))
        #expect(records.count == 4)
        #expect(records[0] == ["design", "consumer", "bytes_moved", "seconds", "mib_per_s", "peak_rss_bytes", "peak_buffered_bytes", "outcome"])
        #expect(records[1] == ["unbounded-stream", "fast", "268435456", "0.5000", "512.0", "31457280", "4194304", "ok"])
        #expect(records[3].last == "capacity-exceeded")
        #expect(records.allSatisfy { $0.count == 8 })
    }

    /// C40: a failed run records the bytes it moved and no speed; `cp` and `cat` are rows too.
    @Test func failedRunHasItsOwnBytesAndNoSpeedAndReferenceRunsAreRows() {
        var failed = Self.run(.pushFail, .slow, outcome: .capacityExceeded)
        failed.bytesMoved = 3 << 20
        let references = [
            ReferenceRun(command: "cp", bytesMoved: 256 << 20, seconds: 0.25),
            ReferenceRun(command: "cat", bytesMoved: 256 << 20, seconds: 0.5),
        ]
        let records = Self.parse(CSVWriter.csv(for: [failed], references: references))
        #expect(records.count == 4)
        #expect(records[1] == ["cp", "-", "268435456", "0.2500", "1024.0", "", "", "ok"])
        #expect(records[2] == ["cat", "-", "268435456", "0.5000", "512.0", "", "", "ok"])
        #expect(records[3] == ["push-fail", "slow", "3145728", "0.5000", "", "31457280", "4194304", "capacity-exceeded"])
        #expect(failed.mebibytesPerSecond == nil)
    }

    @Test func errorMessagesWithCommasQuotesAndNewlinesAreQuoted() {
        let message = "cannot write to 'a,b': \"x\"\nsecond line"
        let text = CSVWriter.csv(for: [Self.run(.boundedPull, .fast, outcome: .error(message))])
        #expect(text.hasSuffix("\r\n"))
        let records = Self.parse(text)
        #expect(records.count == 2)
        #expect(records[1].last == "error: " + message)
    }
}
