import Sluice
@testable import SluiceBenchmarks
import Testing

@Suite struct CSVWriterTests {
    static func run(_ design: BenchmarkDesign, _ consumer: BenchmarkConsumer, outcome: BenchmarkOutcome = .ok) -> BenchmarkRun {
        BenchmarkRun(
            design: design, consumer: consumer, bytesMoved: 256 << 20, seconds: 0.5, peakResidentBytes: 30 << 20,
            peakBufferedBytes: 4 << 20, outcome: outcome,
            samples: [MemorySample(seconds: 0, residentBytes: 10 << 20, bufferedBytes: 0),
                      MemorySample(seconds: 0.25, residentBytes: 30 << 20, bufferedBytes: 4 << 20)],
            chunkBytes: 1 << 20, cpuSeconds: 0.75)
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
        #expect(records[0] == [
            "design", "consumer", "bytes_moved", "seconds", "mib_per_s", "peak_rss_bytes", "peak_buffered_bytes",
            "chunk_bytes", "cpu_seconds", "outcome",
        ])
        #expect(records[1] == ["unbounded-stream", "fast", "268435456", "0.5000", "512.0", "31457280", "4194304", "1048576", "0.750000", "ok"])
        #expect(records[3].last == "capacity-exceeded")
        #expect(records.allSatisfy { $0.count == 10 })
    }

    /// C40: a failed run records the bytes it moved and no speed; `cp` and `cat` are rows too.
    @Test func failedRunHasItsOwnBytesAndNoSpeedAndReferenceRunsAreRows() {
        var failed = Self.run(.pushFail, .slow, outcome: .capacityExceeded)
        failed.bytesMoved = 3 << 20
        let references = [
            ReferenceRun(command: "cp", bytesMoved: 256 << 20, seconds: 0.25, cpuSeconds: 0.2),
            ReferenceRun(command: "cat", bytesMoved: 256 << 20, seconds: 0.5, cpuSeconds: 0.125),
        ]
        let records = Self.parse(CSVWriter.csv(for: [failed], references: references))
        #expect(records.count == 4)
        #expect(records[1] == ["cp", "-", "268435456", "0.2500", "1024.0", "", "", "", "0.200000", "ok"])
        #expect(records[2] == ["cat", "-", "268435456", "0.5000", "512.0", "", "", "", "0.125000", "ok"])
        #expect(records[3] == ["push-fail", "slow", "3145728", "0.5000", "", "31457280", "4194304", "1048576", "0.750000", "capacity-exceeded"])
        #expect(failed.mebibytesPerSecond == nil)
    }

    /// Every row has a chunk size and a CPU time: a design's run its own, `dd` its block size,
    /// `cp` and `cat` (which choose their own) none; CPU seconds to the microsecond.
    @Test func everyRowHasItsChunkSizeAndCPUSeconds() throws {
        var small = Self.run(.boundedPull, .fast)
        small.chunkBytes = 4096
        small.cpuSeconds = 1.234567
        let references = [
            ReferenceRun(command: "cat", bytesMoved: 256 << 20, seconds: 0.5, cpuSeconds: 0.3),
            ReferenceRun(command: "dd", bytesMoved: 256 << 20, seconds: 0.5, chunkBytes: 4096, cpuSeconds: 0.000_001),
        ]
        let records = Self.parse(CSVWriter.csv(for: [small, Self.run(.boundedPull, .fast)], references: references))
        let header = records[0]
        let chunk = try #require(header.firstIndex(of: "chunk_bytes"))
        let cpu = try #require(header.firstIndex(of: "cpu_seconds"))
        #expect(records.dropFirst().map { $0[0] } == ["cat", "dd", "bounded-pull", "bounded-pull"])
        #expect(records.dropFirst().map { $0[chunk] } == ["", "4096", "4096", "1048576"])
        #expect(records.dropFirst().map { $0[cpu] } == ["0.300000", "0.000001", "1.234567", "0.750000"])
        // The columns before them keep their places: scripts that read the older CSV still work.
        #expect(Array(header.prefix(7)) == ["design", "consumer", "bytes_moved", "seconds", "mib_per_s", "peak_rss_bytes", "peak_buffered_bytes"])
        #expect(header.last == "outcome")
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
