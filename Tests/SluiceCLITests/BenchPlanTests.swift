import Sluice
import SluiceBenchmarks
@testable import SluiceCLI
import SluiceTestSupport
import Testing

/// What `sluice bench` measures, and in which order, from its command line.
@Suite struct BenchPlanTests {
    func plan(_ arguments: [String]) throws(UsageError) -> BenchCommand.Plan {
        BenchCommand.Plan(try ParsedArguments(arguments.map { Array($0.utf8) }, for: .bench))
    }

    @Test func chunkSizesAreReadInBinaryUnitsSortedOnceEach() throws {
        let parsed = try ParsedArguments([Array("--chunk-sizes=1M,4K,64K".utf8)], for: .bench)
        #expect(parsed.sizes(.chunkSizes) == [1 << 20, 4 << 10, 64 << 10])
        #expect(try plan(["--chunk-sizes", "1M,4K,64K,4096"]).chunkSizes == [4096, 65536, 1 << 20])
        #expect(try plan([]).chunkSizes.isEmpty)
        #expect(try plan(["--chunk-sizes", "512"]).chunkSizes == [512])
    }

    @Test func optionIsBenchsOnly() {
        #expect(throws: UsageError.self) { try ParsedArguments([Array("--chunk-sizes=4K".utf8)], for: .copy) }
        #expect(throws: UsageError.self) { try ParsedArguments([Array("--chunk-sizes=4K".utf8)], for: .benchRun) }
    }

    /// `cp` and `cat`, each design with each consumer, then per size bounded-pull and
    /// unbounded-stream with the fast consumer and dd; a subject asked for twice runs once.
    @Test func subjectsAreTheReferencesTheDesignsAndTheSweep() throws {
        let plan = try plan(["--design", "bounded-pull", "--chunk-sizes", "4K,1M"])
        #expect(BenchSubject.all(for: plan) == [
            .cp, .cat,
            .design(.boundedPull, .fast, chunkBytes: 1 << 20), .design(.boundedPull, .slow, chunkBytes: 1 << 20),
            .design(.boundedPull, .fast, chunkBytes: 4096), .design(.unboundedStream, .fast, chunkBytes: 4096),
            .dd(chunkBytes: 4096),
            .design(.unboundedStream, .fast, chunkBytes: 1 << 20), .dd(chunkBytes: 1 << 20),
        ])
    }

    /// The warm-up and every odd round run the subjects in reverse of the even rounds.
    @Test func orderAlternatesFromOneRoundToTheNext() {
        let subjects: [BenchSubject] = [.cp, .cat, .dd(chunkBytes: 4096)]
        #expect(BenchSubject.order(subjects, round: 0) == subjects)
        #expect(BenchSubject.order(subjects, round: 1) == [.dd(chunkBytes: 4096), .cat, .cp])
        #expect(BenchSubject.order(subjects, round: 2) == subjects)
    }

    /// Paths reach the reference commands as positional parameters, never inside the script.
    @Test func referenceCommandsTakeThePathsAsParameters() {
        #expect(BenchSubject.dd(chunkBytes: 4096).reference?.script == #"dd if="$1" of="$2" bs=4096 status=none"#)
        #expect(BenchSubject.cat.reference?.script == #"cat "$1" > "$2""#)
        #expect(BenchSubject.cp.reference?.command == "cp")
        #expect(BenchSubject.design(.boundedPull, .fast, chunkBytes: 1).reference == nil)
        #expect(BenchSubject.dd(chunkBytes: 65536).label(planChunkSize: 1 << 20) == "dd bs=64K")
        #expect(BenchSubject.design(.boundedPull, .fast, chunkBytes: 4096).label(planChunkSize: 1 << 20) == "bounded-pull / fast, 4K chunks")
    }
}

/// The bench table's row of a design whose runs partly failed: its figures are the successes'
/// and its outcome counts the failures; a row of failures only has no speed and says all
/// failed; the ratios take no failed row.
@Suite struct BenchSummaryTests {
    static func run(_ design: BenchmarkDesign, _ consumer: BenchmarkConsumer, seconds: Double, rss: Int64, _ outcome: BenchmarkOutcome) -> BenchmarkRun {
        BenchmarkRun(
            design: design, consumer: consumer, bytesMoved: outcome == .ok ? 1 << 30 : 1 << 20, seconds: seconds,
            peakResidentBytes: rss, peakBufferedBytes: 4 << 20, outcome: outcome, samples: [])
    }

    @Test func aRowCountsItsFailuresAndShowsTheMedianOfItsSuccesses() {
        let rows = [
            BenchmarkRow([
                Self.run(.pushFail, .fast, seconds: 0.108, rss: 30 << 20, .capacityExceeded),
                Self.run(.pushFail, .fast, seconds: 0.5, rss: 20 << 20, .ok),
                Self.run(.pushFail, .fast, seconds: 0.079, rss: 30 << 20, .capacityExceeded),
            ]),
            BenchmarkRow([Self.run(.pushFail, .slow, seconds: 0.07, rss: 25 << 20, .capacityExceeded)]),
            BenchmarkRow([Self.run(.unboundedStream, .fast, seconds: 1, rss: 40 << 20, .capacityExceeded)]),
            BenchmarkRow([Self.run(.boundedPull, .fast, seconds: 0.5, rss: 20 << 20, .ok)]),
        ]
        let text = BenchRunner.summary(rows, references: [:], size: 1 << 30, consumers: [.fast, .slow])
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("push-fail") && $0.contains("fast     2048") && $0.hasSuffix("2 of 3 capacity-exceeded") && $0.contains("20.0 MiB") })
        #expect(lines.contains { $0.hasPrefix("push-fail") && $0.contains("slow     -") && $0.hasSuffix("all 1 capacity-exceeded") })
        // No ratio against a row that failed.
        #expect(!text.contains("bounded-pull / unbounded-stream"))
    }
}
