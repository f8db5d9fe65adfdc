import Sluice

/// A progress bar over the benchmark's steps (runs), on standard error: redrawn in place on a
/// terminal, one line per step otherwise.
///
/// Used from the benchmark's one command task only, a step at a time.
final class BenchProgress: @unchecked Sendable {
    private let total: Int
    private var done = 0
    private var label = ""
    private var started = ContinuousClock.now
    private let onTerminal = Console.isTerminal(2)

    /// A bar of `total` steps.
    init(total: Int) { self.total = total }

    /// Shows `label` as the step under way.
    func begin(_ label: String) {
        self.label = label
        draw()
    }

    /// Counts the step under way as done.
    func end() {
        done += 1
    }

    /// Fills the bar and ends its line.
    func finish() {
        done = total
        label = "done"
        draw()
        if onTerminal { Console.writeError("\n") }
    }

    private func draw() {
        let width = 24
        let filled = total > 0 ? done * width / total : width
        let elapsed = ContinuousClock.now - started
        let bar = "[" + String(repeating: "=", count: filled) + (filled < width ? ">" : "")
            + String(repeating: " ", count: max(0, width - filled - 1)) + "]"
        let line = "bench \(bar) \(done)/\(total)  \(elapsed.components.seconds) s  \(label)"
        if onTerminal {
            Console.writeError("\r" + line + "\u{1B}[K")
        } else {
            Console.writeError(line + "\n")
        }
    }
}
