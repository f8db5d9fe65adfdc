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
