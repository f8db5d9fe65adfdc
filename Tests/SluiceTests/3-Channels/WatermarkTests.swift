import SluiceTestSupport
import Testing
@testable import Sluice

/// The push buffer's demand as a value: pause from the high watermark, resume below the low one,
/// and a resume overtaken by a newer pause is recognised.
@Suite struct WatermarkTests {
    @Test func pausesFromTheHighWatermarkUntilBelowTheLowOne() {
        var watermark = Watermark(high: 3, low: 2)
        var demands: [Bool] = []
        for level in 1...4 { demands.append(watermark.didSend(level: level)) }
        #expect(demands == [true, true, false, false])
        let resumes = [3, 2, 1, 0].map { level in watermark.didConsume(level: level) }
        // 2 is not below the low watermark; one resume per pause.
        #expect(resumes == [nil, nil, 1, nil])
        let demand = watermark.didSend(level: 1)
        #expect(demand)
    }

    @Test func aResumeOvertakenByANewerPauseIsNotCurrent() throws {
        var watermark = Watermark(high: 2, low: 1)
        _ = watermark.didSend(level: 2)
        let first = watermark.didConsume(level: 0)
        let resume = try #require(first)
        #expect(watermark.isCurrent(resume))
        let demand = watermark.didSend(level: 2)
        #expect(!demand)
        #expect(!watermark.isCurrent(resume))
        let second = watermark.didConsume(level: 0)
        let next = try #require(second)
        #expect(next == resume + 1 && watermark.isCurrent(next))
    }
}
