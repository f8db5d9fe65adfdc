import Sluice

/// The progress of `sluice follow` on standard error: bytes shipped, the lag (bytes that exist
/// and are not read yet), the rotations seen and the bytes lost, from
/// ``FollowedFile/statistics``.
///
/// `--progress`: a line redrawn in place at most 10 times a second on a terminal, else a plain
/// line at most once a second when something changed. `--progress=json`: one object per line
/// when something changed, at most 10 a second, keys in this order: `bytesShipped`, `lagBytes`,
/// `rotations`, `lostBytes`, `lateBytes`, `uncountedLosses`, `elapsedSeconds`; the last line adds `"done":true`,
/// and `"error"` when the command did not end cleanly. Drawn from a task of its own: a slow
/// terminal never slows the shipping.
struct FollowProgress {
    private let followed: FollowedFile
    private let mode: ProgressMode
    private let label: String
    private let start = ContinuousClock.now
    private let drawer: Task<Void, Never>?

    init(_ followed: FollowedFile, file: Pathname, mode: ProgressMode) {
        self.followed = followed
        self.mode = mode
        label = "follow '\(file.description.replacingControlCharacters)'"
        guard mode != .none else {
            drawer = nil
            return
        }
        let onTerminal = Console.isTerminal(2)
        let interval: Duration = mode == .human && !onTerminal ? .seconds(1) : .milliseconds(100)
        let copy = (followed, mode, label, start)
        drawer = Task.detached(executorPreference: BlockingIOExecutor(label: "sluice.progress")) {
            var drawn: FollowedFile.Statistics?
            while !Task.isCancelled {
                let now = copy.0.statistics
                if now != drawn || drawn == nil {
                    Self.draw(now, mode: copy.1, label: copy.2, elapsed: .now - copy.3, onTerminal: onTerminal, final: nil)
                    drawn = now
                }
                try? await Task.sleep(for: interval)
            }
        }
    }

    /// Stops drawing and writes the last line (`error`: why the command did not end cleanly).
    func end(error: String?) async {
        guard let drawer else { return }
        drawer.cancel()
        await drawer.value
        Self.draw(
            followed.statistics, mode: mode, label: label, elapsed: .now - start, onTerminal: Console.isTerminal(2),
            final: error ?? "")
    }

    /// One line; `final` is nil for an update, "" for a clean end, else the error.
    private static func draw(
        _ counts: FollowedFile.Statistics, mode: ProgressMode, label: String, elapsed: Duration, onTerminal: Bool, final: String?
    ) {
        switch mode {
        case .none: return
        case .json:
            var line = "{\"bytesShipped\":\(counts.bytesRead),\"lagBytes\":\(counts.lagBytes),\"rotations\":\(counts.rotations)"
            line += ",\"lostBytes\":\(counts.lostBytes),\"lateBytes\":\(counts.lateBytes),\"uncountedLosses\":\(counts.uncountedLosses)"
            line += ",\"elapsedSeconds\":" + ProgressSnapshot.jsonNumber(elapsed.sluiceSeconds)
            if let final {
                line += ",\"done\":true"
                if !final.isEmpty {
                    line += ",\"error\":"
                    ProgressSnapshot.appendJSONString(final, to: &line)
                }
            }
            Console.writeError(line + "}\n")
        case .human:
            var text = label + ": " + ProgressDisplay.formatBytes(counts.bytesRead) + " shipped, lag "
                + ProgressDisplay.formatBytes(counts.lagBytes) + ", \(counts.rotations) rotation" + (counts.rotations == 1 ? "" : "s")
            if counts.lostBytes > 0 { text += ", " + ProgressDisplay.formatBytes(counts.lostBytes) + " lost" }
            if let final, !final.isEmpty { text += ", " + final }
            if onTerminal {
                Console.writeError("\r" + text + "\u{1B}[K" + (final != nil ? "\n" : ""))
            } else {
                Console.writeError("sluice: " + text + "\n")
            }
        }
    }
}
