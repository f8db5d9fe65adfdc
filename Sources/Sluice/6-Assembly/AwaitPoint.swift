/// A place where a stage of a ``Pipeline`` suspends: just before an `await`, or just after it
/// returned. Internal: the seam through which tests order events (cancel at exactly the k-th
/// point) without sleeping.
///
/// A point is named by where it is (``Place``), which side of the `await` (``Side``), and its
/// ordinal: how many times its stage reached the same place and side before. Each stage is
/// sequential, so in a run whose inputs are fixed the same points occur, with the same
/// ordinals, whatever the interleaving of the stages.
struct AwaitPoint: Sendable, Hashable, CustomStringConvertible {
    /// What the stage awaits.
    enum Place: String, Sendable, Hashable, CaseIterable {
        /// Reading stage: the source's `next()`.
        case sourceNext = "read.source-next"
        /// Reading stage: `send` into the first channel.
        case readSend = "read.send"
        /// Transform stage: `next()` of the first channel.
        case transformReceive = "transform.receive"
        /// Transform stage: the transform's `process(_:emit:)`.
        case transformProcess = "transform.process"
        /// Transform stage: the transform's `finish(emit:)`.
        case transformFinish = "transform.finish"
        /// Transform stage: `send` of an emitted chunk into the second channel.
        case transformSend = "transform.send"
        /// Writing stage: `next()` of the channel it drains.
        case writeReceive = "write.receive"
        /// Writing stage: the sink's `write(_:)`.
        case sinkWrite = "write.sink-write"
        /// After every stage succeeded: the sink's `commit()`.
        case sinkCommit = "commit"
    }

    /// Before the `await`, or after it returned (or threw).
    enum Side: String, Sendable, Hashable {
        case before, after
    }

    let place: Place
    let side: Side
    /// How many times the stage reached this place and side before, from 0.
    let ordinal: Int

    var description: String { "\(place.rawValue).\(side.rawValue)#\(ordinal)" }
}

/// Called at every ``AwaitPoint``, in the stage that reaches it.
typealias AwaitPointHook = @Sendable (AwaitPoint) -> Void

/// One stage's view of the hook: numbers the points it reaches. Exists only when a hook is set
/// (stages hold an optional), so a copy without one pays a `nil` check per `await`. Confined to
/// its stage.
final class AwaitPoints {
    private let hook: AwaitPointHook
    private var reached: [AwaitPoint.Place: (before: Int, after: Int)] = [:]

    init(_ hook: @escaping AwaitPointHook) {
        self.hook = hook
    }

    /// Reports the next point at `place` on `side`.
    func reach(_ place: AwaitPoint.Place, _ side: AwaitPoint.Side) {
        var counts = reached[place] ?? (0, 0)
        let ordinal: Int
        switch side {
        case .before:
            ordinal = counts.before
            counts.before += 1
        case .after:
            ordinal = counts.after
            counts.after += 1
        }
        reached[place] = counts
        hook(AwaitPoint(place: place, side: side, ordinal: ordinal))
    }
}

extension Optional where Wrapped == AwaitPoints {
    /// Runs `body`, the `await` at `place`, between its two points when there is a hook; the
    /// point after it is reached whether it returns or throws. Without a hook, just `body`.
    func around<T>(_ place: AwaitPoint.Place, _ body: () async throws -> T) async throws -> T {
        guard let points = self else { return try await body() }
        points.reach(place, .before)
        defer { points.reach(place, .after) }
        return try await body()
    }
}
