import Sluice
@testable import SluiceBenchmarks
import Testing

/// A row of `sluice bench`'s table counts its failures and takes its figures from the runs
/// that succeeded: the recorded `bench-1G.csv` had, for push-fail with a fast consumer, three
/// `capacity-exceeded` runs and two `ok`, and its table showed the median of all five as "ok".
@Suite struct BenchmarkRowTests {
    /// Runs from lines of a `bench.csv` (`design,consumer,bytes_moved,seconds,mib_per_s,
    /// peak_rss_bytes,peak_buffered_bytes,chunk_bytes,cpu_seconds,outcome`).
    static func runs(_ csv: String) throws -> [BenchmarkRun] {
        try csv.split(separator: "\n").map { line in
            let fields = line.split(separator: ",", maxSplits: 9, omittingEmptySubsequences: false).map(String.init)
            try #require(fields.count == 10, "\(line)")
            let outcome: BenchmarkOutcome = switch fields[9] {
            case "ok": .ok
            case "capacity-exceeded": .capacityExceeded
            default: .error(String(fields[9].dropFirst("error: ".count)))
            }
            return BenchmarkRun(
                design: try #require(BenchmarkDesign(rawValue: fields[0])), consumer: try #require(BenchmarkConsumer(rawValue: fields[1])),
                bytesMoved: try #require(Int64(fields[2])), seconds: try #require(Double(fields[3])),
                peakResidentBytes: try #require(Int64(fields[5])), peakBufferedBytes: try #require(Int64(fields[6])),
                outcome: outcome, samples: [], chunkBytes: try #require(Int(fields[7])), cpuSeconds: try #require(Double(fields[8])))
        }
    }

    static let pushFailFast = """
        push-fail,fast,148897792,0.1080,,25866240,4194304,1048576,0.163418,capacity-exceeded
        push-fail,fast,769654784,0.6143,,25747456,4194304,1048576,0.892728,capacity-exceeded
        push-fail,fast,1073741824,0.5218,1962.5,24260608,8388608,1048576,0.902005,ok
        push-fail,fast,70254592,0.0790,,25042944,4194304,1048576,0.113619,capacity-exceeded
        push-fail,fast,1073741824,0.5114,2002.3,22069248,7340032,1048576,0.879441,ok
        """

    @Test func aRowWithSomeFailuresCountsThemAndTakesItsFiguresFromTheSuccesses() throws {
        let row = BenchmarkRow(try Self.runs(Self.pushFailFast))
        #expect(row.failureCount == 3)
        #expect(row.outcome == "3 of 5 capacity-exceeded")
        let median = try #require(row.median)
        #expect(median.outcome == .ok)
        // Of the two successes: the median of 0.5114 and 0.5218 s is the upper one's run,
        // the peaks the means of the two.
        #expect(median.seconds == 0.5218)
        #expect(median.peakResidentBytes == (24_260_608 + 22_069_248) / 2)
        #expect(median.peakBufferedBytes == (8_388_608 + 7_340_032) / 2)
        let speeds = try #require(row.speedRange)
        #expect(abs(speeds.lowerBound - 1962.5) < 0.1 && abs(speeds.upperBound - 2002.3) < 0.1)
        #expect(row.peakResidentRange == 22_069_248...24_260_608)
        #expect(row.medianOfSuccesses != nil)
    }

    @Test func aRowOfFailuresOnlySaysSo() throws {
        let row = BenchmarkRow(try Self.runs("""
            push-fail,slow,11534336,0.0711,,27131904,4194304,1048576,0.033687,capacity-exceeded
            push-fail,slow,11534336,0.0742,,26918912,4194304,1048576,0.038360,capacity-exceeded
            push-fail,slow,10485760,0.0725,,25731072,4194304,1048576,0.032138,error: a message, with a comma
            """))
        #expect(row.allFailed)
        #expect(row.outcome == "2 of 3 capacity-exceeded, 1 of 3 error: a message, with a comma")
        #expect(row.speedRange == nil)
        #expect(row.medianOfSuccesses == nil)
        #expect(row.median?.peakResidentBytes == 26_918_912)
        let same = BenchmarkRow(try Self.runs(Self.pushFailFast).filter { $0.outcome != .ok })
        #expect(same.outcome == "all 3 capacity-exceeded")
    }

    @Test func aRowOfSuccessesIsOk() throws {
        let row = BenchmarkRow(try Self.runs(Self.pushFailFast).filter { $0.outcome == .ok })
        #expect(row.outcome == "ok")
        #expect(row.failureCount == 0)
    }
}
