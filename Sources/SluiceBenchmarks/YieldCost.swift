import Sluice

/// The cost of one synchronous yield: ``PushBuffer/yield(_:)`` against
/// `AsyncStream.Continuation.yield(_:)`, measured in the same run.
///
/// Each round yields `count` integers into a fresh buffer that holds them all (a `PushBuffer`
/// with `capacity: count`, an `AsyncStream` with `.unbounded` buffering), with no consumer, so
/// it measures the producer's side alone: the lock, the decision and the enqueue. Rounds of the
/// two alternate, after one discarded warm-up round each; the result is the median per yield.
public enum YieldCost {
    /// Measures both yields.
    ///
    /// - Parameters:
    ///   - count: yields per round (>= 1).
    ///   - rounds: timed rounds of each (>= 1); the median is reported.
    /// - Returns: nanoseconds per yield, median over the rounds, for each.
    public static func measure(count: Int, rounds: Int = 7) -> (pushBufferNanoseconds: Double, asyncStreamNanoseconds: Double) {
        precondition(count >= 1 && rounds >= 1)
        var pushBuffer: [Double] = []
        var asyncStream: [Double] = []
        _ = timePushBuffer(count: count)
        _ = timeAsyncStream(count: count)
        for _ in 0..<rounds {
            pushBuffer.append(timePushBuffer(count: count))
            asyncStream.append(timeAsyncStream(count: count))
        }
        return (pushBuffer.median, asyncStream.median)
    }

    /// Nanoseconds per `PushBuffer.yield` over `count` yields.
    static func timePushBuffer(count: Int) -> Double {
        let buffer = PushBuffer<Int>(capacity: count)
        let start = ContinuousClock.now
        for value in 0..<count {
            guard case .enqueued = buffer.yield(value) else { preconditionFailure("yield not enqueued") }
        }
        return nanoseconds(start.duration(to: .now)) / Double(count)
    }

    /// Nanoseconds per `AsyncStream.Continuation.yield` over `count` yields.
    static func timeAsyncStream(count: Int) -> Double {
        let (stream, continuation) = AsyncStream<Int>.makeStream(bufferingPolicy: .unbounded)
        let start = ContinuousClock.now
        for value in 0..<count {
            guard case .enqueued = continuation.yield(value) else { preconditionFailure("yield not enqueued") }
        }
        let elapsed = start.duration(to: .now)
        continuation.finish()
        withExtendedLifetime(stream) {}
        return nanoseconds(elapsed) / Double(count)
    }

    static func nanoseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
    }
}
