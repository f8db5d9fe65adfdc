/// The one progress of an operation over many files: bytes and files done of the totals,
/// published to one ``ProgressHub`` as ``ProgressSnapshot``s whose ``ProgressSnapshot/files``
/// says which file each is about.
///
/// The totals are known up front (the sizes of the operands), or grow while a walk finds files
/// (``addToTotal(bytes:files:)`` with ``ProgressSnapshot/FileCounts/isTotalGrowing`` until
/// ``totalIsComplete()``), or, for a progress given none (``init(totalBytes:totalFiles:isTotalGrowing:)``
/// with neither), are the files handed over: each joins the file total when its index is
/// reserved (``reserveIndex(size:)``) and its size the byte total then, when known (a walk's
/// file), else once its source is opened
/// (``sized(index:bytes:)``), and the total is final once ``totalIsComplete()`` was said and
/// every such file is sized. Until the total is final, ``ProgressSnapshot/fraction`` is `nil`,
/// so that a non-nil fraction means a share of everything coming and never decreases. Each file in flight reports its own bytes with
/// ``advanced(index:bytesCompleted:bytesWritten:)``; a snapshot's bytes are those of the files finished plus
/// those of the files in flight. Memory: one entry per file in flight, none per file finished.
///
/// One progress may be handed to several ``Copier`` engines (one per segment of a
/// command, or per tree of several), and to files copied on their own beside them: each takes
/// its files' indices from ``reserveIndex(size:)``, adds to the totals and never finishes it; the
/// operation's owner calls ``finish(interrupted:)`` once, at its end. The bytes buffered the
/// snapshots show are those of the engine that started last (their peak: the most of any).
///
/// ## Concurrency contract
/// Every method may be called from any thread; snapshots are published after the lock is
/// released.
package final class ManyFilesProgress: Sendable {
    private struct State {
        var totalBytes: Int64
        var totalFiles: Int
        var isTotalGrowing: Bool
        /// The files counted whose size is not known yet (only when ``countsFiles``).
        var unsized: Set<Int> = []
        /// Whether a file counted has no size to know (a pipe, a sequence of chunks): the total
        /// is then never final before the end.
        var hasUnknownSize = false
        /// Whether the byte total is what is coming: no longer growing, every file sized.
        var isTotalFinal: Bool { !isTotalGrowing && unsized.isEmpty && !hasUnknownSize }
        var finishedBytes: Int64 = 0
        var finishedWritten: Int64 = 0
        var committedBytes: Int64 = 0
        var completed = 0
        var committed = 0
        var failed = 0
        /// Each file in flight's bytes read and written so far.
        var inFlight: [Int: (read: Int64, written: Int64)] = [:]
        /// The file started last, named by snapshots about no file in particular while it runs.
        var lastStarted: (index: Int, file: Pathname)?
        /// The index ``reserveIndex(size:)`` gives next.
        var nextIndex = 0
        /// The most bytes buffered any snapshot saw, over every engine measured.
        var peakBuffered: Int64 = 0
    }

    /// What a snapshot reads the bytes buffered from, now and at most so far.
    typealias BufferedMeasure = @Sendable () -> (now: Int64, peak: Int64)

    /// The measure in a struct of its own: a function value kept as a lock's generic value
    /// would be reabstracted, one thunk more, each time the lock hands it out and takes it
    /// back, so that reading it grew slower with every snapshot.
    private struct Measure: Sendable {
        var read: BufferedMeasure
    }

    /// Where the snapshots go: subscribe before the first file starts.
    package let hub = ProgressHub()
    private let state: LockedValue<State>
    private let start = ContinuousClock.now
    private let measure = LockedValue(Measure(read: { (0, 0) }))

    /// Creates the progress of an operation.
    ///
    /// - Parameters:
    ///   - totalBytes: the bytes known to be copied, summed over the files known.
    ///   - totalFiles: the files known.
    ///   - isTotalGrowing: whether more may come (``addToTotal(bytes:files:)``).
    ///
    /// With neither total and not growing, the totals are the files handed over (see the type).
    package init(totalBytes: Int64? = nil, totalFiles: Int? = nil, isTotalGrowing: Bool = false) {
        let countsFiles = totalBytes == nil && totalFiles == nil && !isTotalGrowing
        self.countsFiles = countsFiles
        state = LockedValue(
            State(totalBytes: totalBytes ?? 0, totalFiles: totalFiles ?? 0, isTotalGrowing: isTotalGrowing || countsFiles))
    }

    /// The index of a file about to be handed over: 0, then one more at each call, so files of
    /// several engines sharing this progress never share an index. A progress given no totals
    /// counts the file, and its `size` when known already (a walk's), else once it is
    /// ``sized(index:bytes:)``.
    package func reserveIndex(size: Int64? = nil) -> Int {
        state.withLock { state in
            defer { state.nextIndex += 1 }
            if countsFiles {
                state.totalFiles += 1
                if let size { state.totalBytes += size } else { state.unsized.insert(state.nextIndex) }
            }
            return state.nextIndex
        }
    }

    /// Whether the totals are the files handed over (no totals were given): a walk then adds
    /// nothing of its own to them.
    package let countsFiles: Bool

    /// File `index`'s source was opened: `bytes` (`nil` when it has no size to know) join the
    /// byte total of a progress given no totals; nothing for any other.
    package func sized(index: Int, bytes: Int64?) {
        state.withLock { state in
            guard state.unsized.remove(index) != nil else { return }
            if let bytes { state.totalBytes += bytes } else { state.hasUnknownSize = true }
        }
    }

    /// Reads the bytes buffered from `measure` from now on (an engine starting).
    func measuresBuffered(by measure: @escaping BufferedMeasure) {
        self.measure.withLock { $0.read = measure }
    }

    /// The bytes buffered now and at most so far, read outside the progress's own lock (it
    /// calls out to an engine).
    private func buffered() -> (now: Int64, peak: Int64) {
        measure.withLock { $0.read }()
    }

    /// Adds files found by a walk, and their bytes, to the totals.
    package func addToTotal(bytes: Int64, files: Int) {
        state.withLock { state in
            state.totalBytes += bytes
            state.totalFiles += files
        }
    }

    /// Says the totals will not grow any more. A progress that counts its files publishes a
    /// snapshot then: once every file is sized, the first with a fraction, not at the next
    /// file's bytes.
    package func totalIsComplete() {
        let flow = buffered()
        let snapshot = state.withLock { state -> ProgressSnapshot? in
            state.isTotalGrowing = false
            guard countsFiles else { return nil }
            let running = state.lastStarted.flatMap { state.inFlight[$0.index] != nil ? $0 : nil }
            return makeSnapshot(&state, flow: flow, current: running?.file, index: running?.index)
        }
        if let snapshot { hub.publish(snapshot) }
    }

    /// File `index` starts: publishes a snapshot about it.
    package func started(index: Int, file: Pathname) {
        let flow = buffered()
        let snapshot = state.withLock { state in
            state.inFlight[index] = (0, 0)
            state.lastStarted = (index, file)
            return makeSnapshot(&state, flow: flow, current: file, index: index)
        }
        hub.publish(snapshot)
    }

    /// File `index` has completed `bytesCompleted` bytes so far and written `bytesWritten`
    /// (cumulative; `nil`: as many as completed).
    package func advanced(index: Int, bytesCompleted: Int64, bytesWritten: Int64? = nil) {
        let flow = buffered()
        let snapshot = state.withLock { state -> ProgressSnapshot? in
            guard state.inFlight[index] != nil else { return nil }
            state.inFlight[index] = (bytesCompleted, bytesWritten ?? bytesCompleted)
            let running = state.lastStarted.flatMap { state.inFlight[$0.index] != nil ? $0 : nil }
            return makeSnapshot(&state, flow: flow, current: running?.file, index: running?.index)
        }
        if let snapshot { hub.publish(snapshot) }
    }

    /// File `index` finished: `bytes` counted as done for it, or the bytes it last reported
    /// done if more (a source of unknown size that failed: the bar never goes back;
    /// ``ProgressSnapshot/bytesCompleted`` keeps to its total), and, when `error` is `nil`, as committed; `written` the bytes it
    /// wrote (`nil`: as many as it last reported written, 0 if none); `error` its failure if it
    /// failed.
    ///
    /// - Returns: the snapshot published about it (for a line per file, `--progress=json`).
    @discardableResult
    package func finished(index: Int, file: Pathname, bytes: Int64, written: Int64? = nil, error: String?) -> ProgressSnapshot {
        let flow = buffered()
        let snapshot = state.withLock { state in
            let reported = state.inFlight.removeValue(forKey: index)
            let done = max(bytes, reported?.read ?? 0)
            // A file that failed before its size was known counts what it did, in the total too.
            if state.unsized.remove(index) != nil { state.totalBytes += done }
            state.finishedBytes += done
            state.finishedWritten += written ?? reported?.written ?? 0
            state.completed += 1
            if error != nil {
                state.failed += 1
            } else {
                state.committed += 1
                state.committedBytes += bytes
            }
            var snapshot = makeSnapshot(&state, flow: flow, current: file, index: index)
            snapshot.files?.currentError = error
            return snapshot
        }
        hub.publish(snapshot)
        return snapshot
    }

    /// The operation's last snapshot, published and returned; the hub's subscribers then end.
    ///
    /// Its ``ProgressSnapshot/fraction`` is 1.0 only when every file known was committed and
    /// the operation was not `interrupted`; otherwise it stays below 1, as every snapshot before.
    ///
    /// - Parameter interrupted: whether the operation stopped before all its files were handed
    ///   over (a signal, a cancelled walk): files a walk never found are missing from the totals.
    @discardableResult
    package func finish(interrupted: Bool = false) -> ProgressSnapshot {
        let flow = buffered()
        let (last, complete) = state.withLock { state in
            state.isTotalGrowing = false
            return (makeSnapshot(&state, flow: flow, current: nil, index: nil), state.failed == 0 && state.committed >= state.totalFiles)
        }
        var snapshot = last
        snapshot.isFinal = true
        if complete && !interrupted {
            // Every file known was committed: complete, also when a file shrank after the walk
            // counted it, or held nothing (as one file's last snapshot).
            snapshot.fraction = 1.0
        }
        hub.finish(with: snapshot)
        return snapshot
    }

    /// A snapshot now; `latest` without publishing.
    package var latest: ProgressSnapshot {
        let flow = buffered()
        return state.withLock { makeSnapshot(&$0, flow: flow, current: nil, index: nil) }
    }

    /// The snapshot of `state`; `flow` is ``buffered``'s reading, taken before the lock (it
    /// calls out to the caller's closure).
    private func makeSnapshot(_ state: inout State, flow: (now: Int64, peak: Int64), current: Pathname?, index: Int?) -> ProgressSnapshot {
        let done = state.finishedBytes + state.inFlight.values.reduce(0) { $0 + $1.read }
        let written = state.finishedWritten + state.inFlight.values.reduce(0) { $0 + $1.written }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let total = max(state.totalBytes, done)
        // 1.0 is for the last snapshot of an operation that succeeded (``finish(interrupted:)``).
        let fraction: Double? = !state.isTotalFinal ? nil : total > 0 ? min(0.999, Double(done) / Double(total)) : nil
        state.peakBuffered = max(state.peakBuffered, flow.peak)
        let (now, peak) = (flow.now, state.peakBuffered)
        var snapshot = ProgressSnapshot(
            bytesCompleted: done, bytesWritten: written, totalBytes: total, fraction: fraction,
            elapsed: elapsed, bytesPerSecond: seconds > 0 ? Double(done) / seconds : 0, bufferedBytes: now,
            peakBufferedBytes: peak, producerSuspended: .zero, isFinal: false)
        snapshot.bytesCommitted = state.committedBytes
        snapshot.filesCommitted = state.committed
        snapshot.files = ProgressSnapshot.FileCounts(
            completed: state.completed, failed: state.failed, total: max(state.totalFiles, state.completed),
            isTotalGrowing: state.isTotalGrowing, current: current, currentIndex: index)
        return snapshot
    }
}
