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
    /// blocks until it has (a file finished, or sealed and in its batch; a batch committed and
    /// its files let go): the thread sleeps on the engine's condition, woken by those events;
    /// files sealed while it waits are committed at once too. `holding` is 1 for a file of the
    /// engine, 0 for the walk of a tree.
    ///
    /// The wait ends with `false` (the open fails) once no other file runs and no batch is
    /// pending (the descriptors are held outside the engine; files that wait here themselves
    /// count for nothing), once the engine or the calling task is cancelled (a task's own
    /// cancellation wakes it through ``wakeWaiters()``, which a walk's cancellation calls), or when the files
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
        let moved = { [tracker] in
            let latest = tracker.latest
            return latest.bytesCompleted &+ latest.bytesWritten
        }
        let (ticket, batch) = state.withLock { state in
            (state.beginDescriptorWait(isFile: holding > 0, moved: moved(), now: .now), state.batch)
        }
        defer { state.withLock { $0.endDescriptorWait(ticket) } }
        if holding > 0 { observer?(.waitingForDescriptors) }
        batch?.commitNow()
        if directories.releaseOpenDirectories() { return true }
        while true {
            // At least a millisecond: a patience of 0 must not spin while bytes move.
            let patience = max(.milliseconds(1), state.withLock { $0.patienceLeft(ticket, now: .now) })
            // A batch counts its release before it lowers its pending count, so a count of 0
            // read after a release is seen with the release.
            let outcome = state.wait(timeout: patience) { state in
                Task.isCancelled ? false : state.descriptorWaitOutcome(ticket, batchPending: batch?.pendingCount ?? 0)
            }
                ?? state.withLock { $0.patienceElapsed(ticket, moved: moved(), batchPending: batch?.pendingCount ?? 0, now: .now) }
            if let outcome { return outcome && !Task.isCancelled }
            if Task.isCancelled { return false }
            batch?.commitNow()
        }
    }

    /// Blocks until no file handed over holds descriptors: none waiting to start, none being
    /// started, none on its thread (a sealed file's are its batch's, released on demand by
    /// ``waitForReleasedDescriptors(holding:)``), or the engine is cancelled; woken by the
    /// events that change those. Call it from a thread of the caller's own, never the
    /// cooperative pool.
    func waitUntilNoFileHoldsDescriptors() {
        _ = state.wait { $0.noFileHoldsDescriptors ? () : nil }
    }

    /// Wakes the threads blocked in ``waitForReleasedDescriptors(holding:)`` and
    /// ``waitUntilNoFileHoldsDescriptors()`` to look again: for a cancellation of their own task,
    /// which changes nothing in the engine.
    package func wakeWaiters() {
        state.withLock { _ in }
    }
}

extension TreeWalker {
    /// Makes the walk share the process's descriptors with the files of the copier `copier`
    /// returns (the one running now; `nil`: none): out of descriptors, it waits while that copier
    /// releases some of its own; where too few are left for a file beside the walk unless its
    /// directories are the walk's own (`DescriptorBudget.copiesOneFileAtATime`), it opens a
    /// directory only once no file holds descriptors.
    package mutating func sharesDescriptors(with copier: @escaping @Sendable () -> Copier?) {
        releasesDescriptors = { copier()?.waitForReleasedDescriptors(holding: 0) ?? false }
        if DescriptorBudget.current.copiesOneFileAtATime {
            beforeOpeningDirectory = { copier()?.waitUntilNoFileHoldsDescriptors() }
        }
    }
}
