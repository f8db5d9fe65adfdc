import SluiceTestSupport
import Testing
@testable import Sluice

@Suite struct CRC32Tests {
    @Test func emptyInputHasValueZero() {
        #expect(CRC32().value == 0)
        #expect(CRC32([UInt8]()).value == 0)
    }

    @Test func matchesTheStandardCheckValue() {
        // The CRC-32 check value of "123456789" (ISO 3309 / ITU-T V.42).
        #expect(CRC32(Array("123456789".utf8)).value == 0xCBF4_3926)
    }

    @Test func describesItselfAsEightLowercaseHexDigits() {
        #expect(CRC32(Array("123456789".utf8)).description == "cbf43926")
        #expect(CRC32().description == "00000000")
        #expect(CRC32(value: 0x1A).description == "0000001a")
    }

    @Test func continuesFromAGivenValue() {
        var resumed = CRC32(value: CRC32(Array("1234".utf8)).value)
        resumed.update(Array("56789".utf8))
        #expect(resumed.value == 0xCBF4_3926)
    }

    @Test(arguments: [1, 7, 4096])
    func splittingTheInputDoesNotChangeTheValue(sliceSize: Int) {
        let data = sampleData(count: 50_000)
        var crc = CRC32()
        var start = 0
        while start < data.count {
            let end = min(start + sliceSize, data.count)
            data[start..<end].withUnsafeBytes { crc.update($0) }
            start = end
        }
        #expect(crc.value == CRC32(data).value)
    }

    @Test func combiningEqualsTheValueOfTheConcatenation() {
        let first = sampleData(count: 10_000, seed: 1)
        let second = sampleData(count: 12_345, seed: 2)
        let combined = CRC32.combine(CRC32(first).value, CRC32(second).value, secondLength: Int64(second.count))
        #expect(combined == CRC32(first + second).value)
    }
}

@Suite struct CRC32ZerosTests {
    @Test(arguments: [0, 1, 4095, 4096, 4097, 3 * 4096 + 5, (1 << 20) + 3, 5 << 20] as [Int64])
    func zerosAddedWithoutReadingEqualZerosRead(count: Int64) {
        let prefix = sampleData(count: 777, seed: 3)
        var added = CRC32(prefix)
        added.update(zeros: count)
        #expect(added.value == CRC32(prefix + [UInt8](repeating: 0, count: Int(count))).value)
    }
}
