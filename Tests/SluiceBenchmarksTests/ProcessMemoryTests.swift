@testable import SluiceBenchmarks
import Testing

@Suite struct ProcessMemoryTests {
    @Test func residentAndPeakBytesOfThisProcessAreRead() {
        #expect(ProcessMemory.residentBytes() > 0)
        #expect(ProcessMemory.peakResidentBytes() >= ProcessMemory.residentBytes())
    }
}
