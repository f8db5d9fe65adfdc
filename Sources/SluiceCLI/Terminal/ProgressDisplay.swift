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
/// for a slow reader). ``finish(_:)`` waits for the final snapshot and writes the last line.
///
/// On a terminal the bar is cut to the terminal's width, read again before each redraw, and
/// drawn only while the process is in the terminal's foreground process group; it shows the
/// rate of the last few seconds (``RecentRate``) and an ETA from it, and its last line the
/// average rate of the whole operation.
struct ProgressDisplay {
    private let mode: ProgressMode
    private let label: String
    private let onTerminal: Bool
    /// Whether the output is written in place (standard output, a device, a FIFO), so that a
    /// last line that did not complete shows the bytes written, not the committed ones.
    private let writesInPlace: Bool
    private let renderer: Task<ProgressSnapshot?, Never>?
    /// Draws every line, the last included, on a thread of its own.
    private let throttle: Throttle?

    /// What one redraw shows: a snapshot and the recent rate that goes with it.
    private struct Frame: Sendable {
        var snapshot: ProgressSnapshot
        var rate: Double
    }

    init(hub: ProgressHub, mode: ProgressMode, label: String, writesInPlace: Bool = false) {
        self.mode = mode
        self.writesInPlace = writesInPlace
        // A file name may hold an escape sequence or a line break: never sent to the terminal.
        let label = label.replacingControlCharacters
        self.label = label
        let onTerminal = Console.isTerminal(2)
        self.onTerminal = onTerminal
        guard mode != .none else {
            renderer = nil
            throttle = nil
            return
        }
        let updates = hub.subscribe()
        let throttle = Throttle(
            interval: (mode == .json || onTerminal) ? .milliseconds(100) : .seconds(1), redrawsStalls: mode == .human
        ) { frame in
            switch mode {
            case .json: Console.writeError(frame.snapshot.jsonLine() + "\n")
            case .human where onTerminal: Self.drawBar(frame.snapshot, rate: frame.rate, label: label)
            case .human: Console.writeError("sluice: " + Self.line(frame.snapshot, rate: frame.rate, label: label) + "\n")
            case .none: break
            }
        }
        self.throttle = throttle
        renderer = Task.detached {
            var last: ProgressSnapshot?
            // A snapshot held back by the interval is drawn once the interval has passed, also
            // when no newer one comes (a pipeline waiting on an idle pipe); a stall is redrawn.
            let flusher = Task.detached {
                while !Task.isCancelled {
                    try? await Task.sleep(for: throttle.interval)
                    await throttle.tick()
                }
            }
            defer { flusher.cancel() }
            for await snapshot in updates {
                last = snapshot
                if snapshot.isFinal { break }
                await throttle.offer(Self.incomplete(snapshot))
            }
            await throttle.close()
            return last
        }
    }

    /// When the last line was drawn and the newest frame not drawn yet. An actor on a thread
    /// of its own: lines come out in order from the two tasks that draw them, and a `write(2)`
    /// to a standard error nobody reads blocks that thread, never the cooperative pool (where
    /// it would stall the copy itself) and never under a lock.
    private actor Throttle {
        nonisolated let executor = BlockingIOExecutor(label: "sluice.progress")
        nonisolated let interval: Duration
        /// Whether a snapshot that stays the newest for a second is drawn again, aged to now, so
        /// the recent rate falls and the ETA grows while nothing moves (the bar, not JSON).
        private let redrawsStalls: Bool
        private let draw: @Sendable (Frame) -> Void
        private var recent = RecentRate()
        private var newest: (snapshot: ProgressSnapshot, arrived: ContinuousClock.Instant)?
        private var lastDrawn: ContinuousClock.Instant?
        private var pending: Frame?
        private var isClosed = false

        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

        init(interval: Duration, redrawsStalls: Bool, draw: @escaping @Sendable (Frame) -> Void) {
            self.interval = interval
            self.redrawsStalls = redrawsStalls
            self.draw = draw
        }

        /// Records `snapshot` in the recent rate and draws it now, unless a line was drawn less
        /// than `interval` ago; then keeps it.
        func offer(_ snapshot: ProgressSnapshot) {
            newest = (snapshot, .now)
            offer(Frame(snapshot: snapshot, rate: recent.record(snapshot)))
        }

        /// What the flusher does every `interval`: draws a kept frame, or, when no snapshot
        /// came for a second, the newest one again with its elapsed time advanced to now (the
        /// hub publishes nothing while no byte moves).
        func tick() {
            if pending != nil { return drawPending() }
            let now = ContinuousClock.now
            guard redrawsStalls, !isClosed, let newest, now - newest.arrived >= .seconds(1),
                lastDrawn.map({ now - $0 >= .seconds(1) }) ?? true
            else { return }
            var aged = newest.snapshot
            aged.elapsed += now - newest.arrived
            draw(Frame(snapshot: aged, rate: recent.record(aged)))
            lastDrawn = now
        }

        /// Draws `frame` now unless a line was drawn less than `interval` ago; then keeps it.
        private func offer(_ frame: Frame) {
            let now = ContinuousClock.now
            if let lastDrawn, now - lastDrawn < interval {
                pending = frame
                return
            }
            draw(frame)
            lastDrawn = now
            pending = nil
        }

        /// Draws the kept frame, if any, once `interval` has passed since the last line.
        private func drawPending() {
            let now = ContinuousClock.now
            guard !isClosed, let pending, lastDrawn.map({ now - $0 >= interval }) ?? true else { return }
            draw(pending)
            lastDrawn = now
            self.pending = nil
        }

        /// No line after this one: the caller writes the last, with ``write(_:)``.
        func close() {
            isClosed = true
        }

        /// Runs `body`, which writes a line, on this actor's thread.
        func write(_ body: @Sendable () -> Void) {
            body()
        }
    }

    /// How an operation ended, for its last progress line.
    enum Ending: Equatable {
        /// Every file committed: the last line reads 100 % (or N/N files).
        case completed
        /// Stopped by an error; the message is the last JSON line's `"error"`.
        case failed(String)
        /// Stopped by a signal.
        case interrupted

        /// The last JSON line's `"error"`: `nil` for a success.
        var error: String? {
            switch self {
            case .completed: nil
            case .failed(let message): message
            case .interrupted: "interrupted"
            }
        }

        /// The word the last bar or log line ends with: `nil` for a success.
        var word: String? {
            switch self {
            case .completed: nil
            case .failed: "failed"
            case .interrupted: "interrupted"
            }
        }
    }

    /// Waits for the final snapshot and writes the last line: for JSON, the snapshot with
    /// `"done": true` (and `"error"` when the operation did not complete); for a bar, the bar at
    /// its end and a newline. Only the last line of a success reads as complete: the last line
    /// of an operation that failed or was interrupted shows what was committed (files and
    /// bytes, never 100 %, nor N/N files when a file failed) and says `failed` or
    /// `interrupted`. (A tree whose failures were directories or links may have committed every
    /// file it found: `N/N files … failed`.)
    func finish(_ ending: Ending) async {
        guard let renderer, let throttle, var last = await renderer.value else { return }
        if ending != .completed { last = Self.incomplete(last) }
        let (mode, label, onTerminal, final, inPlace) = (mode, label, onTerminal, last, writesInPlace)
        await throttle.write {
            switch mode {
            case .json:
                Console.writeError(final.jsonLine(done: true, error: ending.error) + "\n")
            case .human where onTerminal:
                Self.drawBar(final, rate: final.bytesPerSecond, label: label, ending: ending, inPlace: inPlace)
            case .human:
                Console.writeError(
                    "sluice: " + Self.line(final, rate: final.bytesPerSecond, label: label, ending: ending, inPlace: inPlace) + "\n")
            case .none: break
            }
        }
    }

    /// `snapshot` with its fraction at most 0.999: the source may be read to its end while the
    /// last bytes are still being written, or while the operation is about to fail; `1.0` and
    /// `100%` are for the last line of an operation that succeeded.
    static func incomplete(_ snapshot: ProgressSnapshot) -> ProgressSnapshot {
        var shown = snapshot
        shown.fraction = snapshot.fraction.map { min($0, 0.999) }
        return shown
    }

    /// What a line shows of `snapshot`: as it is, or for the last line of an operation that did
    /// not complete (`ending` failed or interrupted), ``committed(_:)``, or with an output
    /// written in place, ``written(_:)``.
    private static func shown(_ snapshot: ProgressSnapshot, ending: Ending?, inPlace: Bool) -> ProgressSnapshot {
        ending?.word == nil ? snapshot : inPlace ? written(snapshot) : committed(snapshot)
    }

    /// What the last line of an operation that did not complete shows when its output is
    /// written in place (standard output): the bytes written, which are out, with no fraction
    /// (the total is the input's).
    static func written(_ snapshot: ProgressSnapshot) -> ProgressSnapshot {
        var shown = snapshot
        (shown.bytesCompleted, shown.fraction, shown.totalBytes) = (snapshot.bytesWritten, nil, nil)
        return shown
    }

    /// What the last line of an operation that did not complete shows: the committed bytes and
    /// files in place of those read and done, their fraction of the total (below 1).
    static func committed(_ snapshot: ProgressSnapshot) -> ProgressSnapshot {
        var shown = snapshot
        shown.bytesCompleted = snapshot.bytesCommitted
        shown.fraction = snapshot.totalBytes.flatMap { total in
            total > 0 ? min(0.999, Double(snapshot.bytesCommitted) / Double(total)) : nil
        }
        return shown
    }

    /// Redraws the bar on standard error, a terminal, in its current width; nothing while this
    /// process is not in the terminal's foreground process group. With `TERM=dumb` no escape
    /// sequence is sent: the line is padded with spaces to the width instead, as `pv` does.
    /// `ending` is set for the last line.
    private static func drawBar(
        _ snapshot: ProgressSnapshot, rate: Double, label: String, ending: Ending? = nil, inPlace: Bool = false
    ) {
        guard Console.isForeground(2) else { return }
        let columns = Console.columns(of: 2)
        var text = bar(snapshot, rate: rate, label: label, columns: columns, ending: ending, inPlace: inPlace)
        if Console.isDumbTerminal {
            text += String(repeating: " ", count: max(0, columns - 1 - text.displayWidth))
        } else {
            text += "\u{1B}[K"
        }
        Console.writeError("\r" + text + (ending != nil ? "\n" : ""))
    }

    /// The fewest columns the bar is laid out in: below, only the percent (or the bytes) is drawn.
    static let minimumColumns = 20

    /// `label  [=======>      ]  45%  1.2 GiB / 2.0 GiB  310 MiB/s  ETA 0:03`, in fewer than
    /// `columns` display columns (the last column is left free, so the cursor never wraps).
    ///
    /// No number is ever cut: when the line is too wide, the bar narrows (24, 16, then 10
    /// cells), then whole fields go in a fixed order: the ETA, the rate, the bar. Then the name
    /// is shortened, keeping its closing quote (down to `copy '…'`). When even that does not fit,
    /// or below ``minimumColumns``, only the percent (or, with no total, the bytes) is drawn.
    /// The last line (`ending` given) of an operation that did not complete shows what was
    /// committed, and ends with `failed` or `interrupted` in place of the rate.
    static func bar(
        _ snapshot: ProgressSnapshot, rate: Double, label: String, columns: Int, ending: Ending? = nil, inPlace: Bool = false
    ) -> String {
        let limit = max(1, columns - 1)
        let word = ending?.word
        let snapshot = shown(snapshot, ending: ending, inPlace: inPlace)
        let percent = snapshot.fraction.map { pad(percentText($0), 4) }
        let name = label + currentFile(snapshot)
        let total = snapshot.isFinal && word == nil ? nil : snapshot.totalBytes.map { " / " + atLeast(snapshot) + formatBytes($0) }
        let bytes = formatBytes(snapshot.bytesCompleted) + (total ?? "") + (word == nil ? "" : inPlace ? " written" : " committed")
        let core = [percent, snapshot.files.map { filesText($0, committed: snapshot.filesCommitted, interrupted: ending == .interrupted) }, bytes].compactMap { $0 }
        let speed = word == nil ? formatBytes(Int64(rate)) + "/s" : nil
        let eta = eta(snapshot, rate: rate).map { "ETA " + $0 }
        let minimal = snapshot.fraction.map(percentText) ?? formatBytes(snapshot.bytesCompleted)
        guard columns >= minimumColumns else { return minimal.displayWidth <= limit ? minimal : "" }
        // The fields after the core, fewer each time; then the name is shortened.
        for extras in [[speed, eta], [speed], []] {
            let tail = (core + extras.compactMap { $0 } + [word].compactMap { $0 }).joined(separator: "  ")
            for width in snapshot.fraction == nil ? [0] : [24, 16, 10] {
                let drawn = snapshot.fraction.map { width > 0 ? meter($0, width: width) + " " : "" } ?? ""
                let text = name + "  " + drawn + tail
                if text.displayWidth <= limit { return text }
            }
        }
        let tail = (core + [word].compactMap { $0 }).joined(separator: "  ")
        let room = limit - 2 - tail.displayWidth
        if let shortened = shortened(name, toColumns: room) { return shortened + "  " + tail }
        return minimal.displayWidth <= limit ? minimal : ""
    }

    /// `name` in at most `columns` columns: as it is, or cut with `…` before its closing quote
    /// (`copy 'long-na…'`); `nil` when not even the part before the first quote and `'…'` fit
    /// (for a name with no quotes, 6 columns).
    static func shortened(_ name: String, toColumns columns: Int) -> String? {
        if name.displayWidth <= columns { return name }
        guard name.hasSuffix("'"), let quote = name.firstIndex(of: "'") else {
            return columns >= min(name.displayWidth, 6) ? name.truncated(toColumns: columns) : nil
        }
        let shortest = String(name[...quote]) + "…'"
        guard columns >= shortest.displayWidth else { return nil }
        return String(name.dropLast()).truncated(toColumns: columns - 1) + "'"
    }

    /// `45%`: the whole percent of `fraction`, rounded down (0.999 is `99%`).
    private static func percentText(_ fraction: Double) -> String {
        String(Int(fraction * 100)) + "%"
    }

    /// `[=======>      ]`: `width` cells between the brackets.
    private static func meter(_ fraction: Double, width: Int) -> String {
        let filled = min(width, Int(fraction * Double(width)))
        let arrow = filled < width ? ">" : ""
        return "[" + String(repeating: "=", count: filled) + arrow
            + String(repeating: " ", count: max(0, width - filled - arrow.count)) + "]"
    }

    /// `copy 'a': 45% 1.2 GiB of 2.0 GiB, 310 MiB/s, ETA 0:03` for logs; the last line of an
    /// operation that did not complete: `copy 'a': 0% 0 B of 2.0 GiB committed, interrupted`.
    static func line(
        _ snapshot: ProgressSnapshot, rate: Double, label: String, ending: Ending? = nil, inPlace: Bool = false
    ) -> String {
        let word = ending?.word
        let snapshot = shown(snapshot, ending: ending, inPlace: inPlace)
        var text = label + currentFile(snapshot) + ": "
        if let fraction = snapshot.fraction { text += percentText(fraction) + " " }
        if let files = snapshot.files {
            text += filesText(files, committed: snapshot.filesCommitted, interrupted: ending == .interrupted) + ", "
        }
        text += formatBytes(snapshot.bytesCompleted)
        if let total = snapshot.totalBytes { text += " of " + atLeast(snapshot) + formatBytes(total) }
        if let word { return text + (inPlace ? " written, " : " committed, ") + word }
        text += ", " + formatBytes(Int64(rate)) + "/s"
        if let eta = eta(snapshot, rate: rate) { text += ", ETA " + eta }
        return text
    }

    /// The time left at `rate` bytes per second, `m:ss` or `h:mm:ss`; `nil` when unknown or 100
    /// hours and more.
    static func eta(_ snapshot: ProgressSnapshot, rate: Double) -> String? {
        guard !snapshot.isFinal, let total = snapshot.totalBytes, rate > 0 else { return nil }
        let left = (Double(max(0, total - snapshot.bytesCompleted)) / rate).rounded(.up)
        guard left < 100 * 3600 else { return nil }  // a stall's ETA means nothing (and may not fit an Int)
        let seconds = Int(left)
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

    /// For many files: `: 'name'` of the file the snapshot is about, after the operation's
    /// label (none on the last line).
    private static func currentFile(_ snapshot: ProgressSnapshot) -> String {
        guard !snapshot.isFinal, let current = snapshot.files?.current else { return "" }
        return ": '" + current.description.replacingControlCharacters + "'"
    }

    /// `3/10 files` committed of the total; `3/10+ files` while a walk may still find more;
    /// `3/10 files (1 failed)` once one failed (not said once interrupted: the files a signal
    /// stopped count as failed).
    static func filesText(_ files: ProgressSnapshot.FileCounts, committed: Int, interrupted: Bool = false) -> String {
        "\(committed)/\(files.total)" + (files.isTotalGrowing ? "+" : "") + " file" + (files.total == 1 ? "" : "s")
            + (files.failed > 0 && !interrupted ? " (\(files.failed) failed)" : "")
    }

    /// `>= ` before a total that may still grow.
    private static func atLeast(_ snapshot: ProgressSnapshot) -> String {
        snapshot.files?.isTotalGrowing == true ? ">= " : ""
    }
}
