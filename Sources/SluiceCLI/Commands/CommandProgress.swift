import Sluice

/// The one progress of a command over many files (several operands, several trees): its
/// `ManyFilesProgress`, the bar `--progress` draws of it, and its last line, written once by
/// ``end(_:)`` once, by ``OperandBatch``, whatever ran.
struct CommandProgress {
    let progress: ManyFilesProgress
    private let display: ProgressDisplay?
    private let writesJSON: Bool

    /// Starts drawing `progress` in `mode` (a bar for `--progress`; `--progress=json` lines are
    /// the callers', one per file, and the last one here).
    init(_ progress: ManyFilesProgress, mode: ProgressMode, label: String) {
        self.progress = progress
        display = mode == .human ? ProgressDisplay(hub: progress.hub, mode: .human, label: label) : nil
        writesJSON = mode == .json
    }

    /// Ends the command's progress: its final snapshot (interrupted or not, as `ending` says),
    /// the bar's last line, and the last `--progress=json` line, with `"error"` unless completed.
    func end(_ ending: ProgressDisplay.Ending) async {
        let last = progress.finish(interrupted: ending == .interrupted)
        await display?.finish(ending)
        if writesJSON { Console.writeError(last.jsonLine(done: true, error: ending.error) + "\n") }
    }
}
