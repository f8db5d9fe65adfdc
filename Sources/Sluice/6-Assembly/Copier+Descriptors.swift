#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What the engine does when the process runs out of descriptors (`EMFILE`, `ENFILE`): it
/// releases its own and waits for its files to release theirs (`DescriptorBudget`).
extension Copier {
    /// After an open failed for want of descriptors (`EMFILE`, `ENFILE`): whether the engine
    /// itself holds descriptors it will release (files on their threads besides the one that
    /// asked, sealed files waiting for their batch, directories waiting for their sync), and if
    /// so, makes it release them (the batch committed now, the directories synced early) and
    /// waits until it has (a file finished, or sealed and in its batch; a batch committed and
    /// its files let go), checking every millisecond; files sealed while it waits are
    /// committed at once too. `holding` is 1 for a file of the engine, 0 for the walk of a tree.
    ///
    /// The wait ends with `false` (the open fails) once no other file runs and no batch is
    /// pending (the descriptors are held outside the engine; files that wait here themselves
    /// count for nothing), once the engine or the calling task is cancelled, or when the files
    /// running have moved no byte and no batch has been pending for
    /// ``Options/descriptorWaitMilliseconds`` (10 s): a file that may never end (a FIFO's
    /// writer, a stalled mount) does not hold the others for ever, and a busy disk, where a
    /// batch's `syncfs(2)` or the files' writes take longer than that, does not fail a file
    /// while the copy moves. Blocks: call it from a thread of the caller's own, never the
    /// cooperative pool.
    ///
    /// - Returns: `true` once descriptors were released (try again); `false` when the engine
    ///   holds none it would release (the open fails for good).
    func waitForReleasedDescriptors(holding: Int) -> Bool {
        let isFile = holding > 0
        // The files on their threads that are not waiting here too (a file that waits releases
        // nothing until it is let go); the walk is not one of the files.
        let others = { (state: State) in state.running - state.filesWaitingForDescriptors }
        let (start, active, batch) = state.withLock { state in
            if isFile { state.filesWaitingForDescriptors += 1 }
            return (state.releases, others(state), state.batch)
        }
        defer { if isFile { state.withLock { $0.filesWaitingForDescriptors -= 1 } } }
        let committing = batch?.commitNow() ?? false
        if directories.releaseOpenDirectories() { return true }
        // A batch counts its release before it lowers its pending count: a count of 0 read
        // after the snapshot may mean a batch let its files go since, which is a release.
        let releasedSinceStart = { self.state.withLock { $0.releases != start && !$0.isCancelled } && !Task.isCancelled }
        guard active > 0 || committing || (batch?.pendingCount ?? 0) > 0 else { return releasedSinceStart() }
        // A release comes when a file finishes or a batch is committed. The bytes the files
        // have moved, read every 50 ms: while they move (or a batch is pending), the wait goes on.
        let patience = Duration.milliseconds(options.descriptorWaitMilliseconds)
        let moved = { [tracker] in
            let latest = tracker.latest
            return latest.bytesCompleted &+ latest.bytesWritten
        }
        var (mark, lastMove, polls) = (moved(), ContinuousClock.now, 0)
        while state.withLock({ $0.releases == start && !$0.isCancelled }) && !Task.isCancelled {
            let pending = batch?.pendingCount ?? 0
            // Nothing left to release: give up, unless a batch let its files go since the loop's check.
            if state.withLock({ others($0) <= 0 }) && pending == 0 { return releasedSinceStart() }
            if pending > 0 { batch?.commitNow() }
            polls += 1
            if polls % 50 == 0 {
                let now = moved()
                if now != mark || pending > 0 {
                    (mark, lastMove) = (now, .now)
                } else if ContinuousClock.now - lastMove > patience {
                    return false
                }
            }
            usleep(1_000)
        }
        return !state.withLock { $0.isCancelled } && !Task.isCancelled
    }

    /// Waits until no file handed over holds descriptors: none waiting to start, none being
    /// started, none on its thread (a sealed file's are its batch's, released on demand by
    /// ``waitForReleasedDescriptors(holding:)``), or the engine is cancelled. Checks every
    /// 100 µs. Blocks: call it from a thread of the caller's own, never the cooperative pool.
    func waitUntilNoFileHoldsDescriptors() {
        while state.withLock({ ($0.running > 0 || $0.dispatching > 0 || !$0.waiting.isEmpty) && !$0.isCancelled }) {
            usleep(100)
        }
    }
}
