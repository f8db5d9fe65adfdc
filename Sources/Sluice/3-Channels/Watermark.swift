/// The demand of a source that can pause: "pause" from the moment the buffered count reaches the
/// high watermark, until the consumer drains it below the low one.
///
/// A value the ``PushBuffer`` state machine keeps beside its buffer (the shape of
/// swift-async-algorithms' multi-producer channel watermark): ``didSend(level:)`` after an
/// element arrived and ``didConsume(level:)`` after one left answer whether the source should
/// produce. Each pause is numbered, so a resume decided at one pause can be recognised as
/// overtaken once a newer pause has been answered (``isCurrent(_:)``).
@usableFromInline
struct Watermark {
    /// The buffered count at which a source is told to pause (>= 1).
    @usableFromInline let high: Int
    /// The buffered count below which a paused source resumes (1...high).
    @usableFromInline let low: Int
    /// Whether the source was told to pause and has not been resumed since.
    @usableFromInline var isPaused = false
    /// How many times the source was told to pause.
    @usableFromInline var pauseCount = 0

    /// Creates a watermark; `high` >= 1 and `low` in 1...high, checked by the caller.
    @inlinable
    init(high: Int, low: Int) {
        self.high = high
        self.low = low
    }

    /// An element arrived and `level` elements are now buffered.
    ///
    /// - Returns: whether the source should go on producing: false from the crossing of the high
    ///   watermark until ``didConsume(level:)`` resumes it.
    @inlinable
    mutating func didSend(level: Int) -> Bool {
        if !isPaused && level >= high {
            isPaused = true
            pauseCount &+= 1
        }
        return !isPaused
    }

    /// An element left and `level` elements are now buffered.
    ///
    /// - Returns: when this crossed below the low watermark while paused, the number of the pause
    ///   it ends (hand it to ``isCurrent(_:)`` before resuming the source); nil otherwise.
    @inlinable
    mutating func didConsume(level: Int) -> Int? {
        guard isPaused, level < low else { return nil }
        isPaused = false
        return pauseCount
    }

    /// Whether a resume that ended pause `pause` still stands: no newer pause was answered since.
    @inlinable
    func isCurrent(_ pause: Int) -> Bool {
        pauseCount == pause && !isPaused
    }
}
