@testable import SluiceBenchmarks
import Testing

@Suite struct ProcessMemoryTests {
    @Test func residentAndPeakBytesOfThisProcessAreRead() {
        // Resident first, peak second: other tests run in this process and may grow it in
        // between, and the peak (VmHWM) never falls below a resident size read before it.
        let resident = ProcessMemory.residentBytes()
        let peak = ProcessMemory.peakResidentBytes()
        #expect(resident > 0)
        #expect(peak >= resident)
    }
}
