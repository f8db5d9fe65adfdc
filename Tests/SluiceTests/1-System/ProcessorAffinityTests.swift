import Testing
@testable import Sluice
import SluiceTestSupport

@Suite struct ProcessorAffinityTests {
    /// The count `nproc` prints: the processors of the affinity mask, which a container or
    /// `taskset` may make fewer than the machine's.
    @Test(.enabled(if: Tool.find("nproc") != nil, "nproc is not installed"))
    func countIsWhatNprocPrints() async throws {
        let nproc = try await Tool.run(Tool.find("nproc")!, [])
        #expect(nproc.status == 0)
        let printed = String(decoding: nproc.output, as: UTF8.self).split(separator: "\n").first.flatMap { Int($0) }
        #expect(ProcessorAffinity.availableProcessorCount() == printed)
        #expect(ProcessorAffinity.availableProcessorCount() >= 1)
    }
}
