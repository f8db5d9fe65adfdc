import Sluice

/// How a command shows progress on standard error.
enum ProgressMode: Equatable {
    /// Nothing (the default).
    case none
    /// `--progress`: a one-line bar redrawn at most 10 times a second on a terminal; a plain
    /// line at most once a second otherwise.
    case human
    /// `--progress=json`: one JSON object per line (``ProgressSnapshot/jsonLine(done:error:)``),
    /// the first at once, then at most 10 a second, and a last line with `"done": true`.
    case json
}

/// Renders one operation's ``ProgressHub`` on standard error.
///
/// Subscribes when created (before the operation runs, so nothing is missed) and renders from a
/// task of its own; the rendering never slows the copy (the hub keeps only the newest snapshot
/// for a slow reader). ``finish(error:)`` waits for the final snapshot and writes the last line.
struct ProgressDisplay {
    private let mode: ProgressMode
    private let label: String
    private let renderer: Task<ProgressSnapshot?, Never>?

    init(hub: ProgressHub, mode: ProgressMode, label: String) {
        self.mode = mode
        self.label = label
        guard mode != .none else {
            renderer = nil
            return
        }
        let updates = hub.subscribe()
        let onTerminal = Console.isTerminal(2)
        let throttle = Throttle(interval: (mode == .json || onTerminal) ? .milliseconds(100) : .seconds(1)) { snapshot in
            switch mode {
            case .json: Console.writeError(snapshot.jsonLine() + "\n")
            case .human where onTerminal: Console.writeError("\r" + Self.bar(snapshot, label: label) + "\u{1B}[K")
            case .human: Console.writeError("sluice: " + Self.line(snapshot, label: label) + "\n")
            case .none: break
            }
        }
        renderer = Task.detached {
            var last: ProgressSnapshot?
            // A snapshot held back by the interval is drawn once the interval has passed, also
            // when no newer one comes (a pipeline waiting on an idle pipe).
            let flusher = Task.detached {
                while !Task.isCancelled {
                    try? await Task.sleep(for: throttle.interval)
                    await throttle.drawPending()
                }
            }
            defer { flusher.cancel() }
            for await snapshot in updates {
                last = snapshot
                if snapshot.isFinal { break }
                await throttle.offer(snapshot)
            }
            await throttle.close()
            return last
        }
    }

    /// When the last line was drawn and the newest snapshot not drawn yet. An actor on a thread
    /// of its own: lines come out in order from the two tasks that draw them, and a `write(2)`
    /// to a standard error nobody reads blocks that thread, never the cooperative pool (where
    /// it would stall the copy itself) and never under a lock.
    private actor Throttle {
        nonisolated let executor = BlockingIOExecutor(label: "sluice.progress")
        nonisolated let interval: Duration
        private let draw: @Sendable (ProgressSnapshot) -> Void
        private var lastDrawn: ContinuousClock.Instant?
        private var pending: ProgressSnapshot?
        private var isClosed = false

        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

        init(interval: Duration, draw: @escaping @Sendable (ProgressSnapshot) -> Void) {
            self.interval = interval
            self.draw = draw
        }

        /// Draws `snapshot` now unless a line was drawn less than `interval` ago; then keeps it.
        func offer(_ snapshot: ProgressSnapshot) {
            let now = ContinuousClock.now
            if let lastDrawn, now - lastDrawn < interval {
                pending = snapshot
                return
            }
            draw(snapshot)
            lastDrawn = now
            pending = nil
        }

        /// Draws the kept snapshot, if any, once `interval` has passed since the last line.
        func drawPending() {
            let now = ContinuousClock.now
            guard !isClosed, let pending, lastDrawn.map({ now - $0 >= interval }) ?? true else { return }
            draw(pending)
            lastDrawn = now
            self.pending = nil
        }

        /// No line after this one: the caller writes the last.
        func close() {
            isClosed = true
        }
    }

    /// Waits for the final snapshot and writes the last line: for JSON, the snapshot with
    /// `"done": true` (and `"error"` when the operation failed); for a bar, the bar at its end and
    /// a newline.
    func finish(error: String?) async {
        guard let renderer else { return }
        let last = await renderer.value
        switch mode {
        case .json:
            if let last { Console.writeError(last.jsonLine(done: true, error: error) + "\n") }
        case .human:
            guard let last else { return }
            if Console.isTerminal(2) {
                Console.writeError("\r" + Self.bar(last, label: label) + "\u{1B}[K\n")
            } else {
                Console.writeError("sluice: " + Self.line(last, label: label) + "\n")
            }
        case .none: break
        }
    }

    /// `label  [=======>      ]  45%  1.2 GiB  310 MiB/s  ETA 0:03`
    static func bar(_ snapshot: ProgressSnapshot, label: String) -> String {
        let width = 24
        var text = label + "  "
        if let fraction = snapshot.fraction {
            let filled = Int(fraction * Double(width))
            let arrow = filled < width ? ">" : ""
            text += "[" + String(repeating: "=", count: filled) + arrow
                + String(repeating: " ", count: max(0, width - filled - arrow.count)) + "] "
            text += pad(String(Int(fraction * 100)) + "%", 4) + "  "
        }
        text += formatBytes(snapshot.bytesCompleted)
        if let total = snapshot.totalBytes, !snapshot.isFinal { text += " / " + formatBytes(total) }
        text += "  " + formatBytes(Int64(snapshot.bytesPerSecond)) + "/s"
        if let eta = eta(snapshot) { text += "  ETA " + eta }
        return text
    }

    /// `copy 'a': 45% 1.2 GiB of 2.0 GiB, 310 MiB/s, ETA 0:03` for logs.
    static func line(_ snapshot: ProgressSnapshot, label: String) -> String {
        var text = label + ": "
        if let fraction = snapshot.fraction { text += String(Int(fraction * 100)) + "% " }
        text += formatBytes(snapshot.bytesCompleted)
        if let total = snapshot.totalBytes { text += " of " + formatBytes(total) }
        text += ", " + formatBytes(Int64(snapshot.bytesPerSecond)) + "/s"
        if let eta = eta(snapshot) { text += ", ETA " + eta }
        return text
    }

    static func eta(_ snapshot: ProgressSnapshot) -> String? {
        guard !snapshot.isFinal, let total = snapshot.totalBytes, snapshot.bytesPerSecond > 0 else { return nil }
        let seconds = Int((Double(max(0, total - snapshot.bytesCompleted)) / snapshot.bytesPerSecond).rounded(.up))
        let minutes = seconds / 60
        return minutes >= 60
            ? "\(minutes / 60):" + pad2(minutes % 60) + ":" + pad2(seconds % 60)
            : "\(minutes):" + pad2(seconds % 60)
    }

    /// Bytes in binary units with one decimal: `512 B`, `1.5 KiB`, `3.2 GiB`.
    static func formatBytes(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) B" }
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }

    private static func pad2(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}
