@testable import SluiceBenchmarks
import Testing

@Suite struct BinaryUnitsTests {
    @Test func sizesAreNamedAsTheCommandLineTakesThem() {
        #expect(BinaryUnits.abbreviation(4096) == "4K")
        #expect(BinaryUnits.abbreviation(1 << 20) == "1M")
        #expect(BinaryUnits.abbreviation(1536 << 10) == "1536K")
        #expect(BinaryUnits.abbreviation(1000) == "1000")
        #expect(BinaryUnits.abbreviation(0) == "0")
    }
}
