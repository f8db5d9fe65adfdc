import Sluice
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The one way a command (`copy`, `copy -r`/`-a`, `compress`, `decompress`, with or without
/// `-r`) runs its operands and reports them: every file-to-file operand and every tree goes to
/// one ``Copier`` (files in flight within one byte budget, one directory `fsync(2)` per
/// directory), with one progress for all of them: the command's `ManyFilesProgress`, which
/// every segment's engine and every operand run alone report to, and which ends once, after
/// the last operand (one bar, one last `--progress=json` line); one tally gives the exit
/// status. A command of one file operand runs it alone (``Transfer/run(options:in:)``), with the
/// progress and messages of one file.
///
/// The rules of one operand after another stay:
/// - Messages (failures, warnings, skips, `--verbose`) are printed in operand order, each as
///   soon as the operands before it are done; `--progress=json` prints a line per file as it
///   finishes (with its index), then one line with the totals.
/// - A later operand never overwrites a file this run created: an operand whose destination
///   names the same directory entry as an earlier one's waits until the files in flight are
///   done, then is checked as when run alone.
/// - Standard input, standard output and `--test` operands run alone, in their turn, once the
///   files before them are done.
/// - `--rm` removes sources only once the batch's directories are synced.
/// - Trees (``OperandStep/tree(destination:options:)``) are walked one after another, their
///   files many at once; each entry that fails is named as the walk meets it, and with
///   `--verbose` each tree's counts follow its last file.
///
/// Used on the command's thread only; the engine's completions go through one lock.
final class OperandBatch {
    enum Slot {
        case skipped(message: String?, isFailure: Bool)
        /// A message only (an entry a walk passed over, with `-v`).
        case noted(message: String?)
        case moved(message: String?)
        case finished(Transfer, Result<Copier.Committed, any Error>)
        case refused(Transfer, FileError)
    }

    /// An operand handed to the engine, which its job's completion holds: one reference for
    /// each file in flight or waiting for its batch's `syncfs(2)`.
    private final class Submitted: Sendable {
        let position: Int
        let transfer: Transfer

        init(position: Int, transfer: Transfer) {
            self.position = position
            self.transfer = transfer
        }
    }

    /// What an operand's completion leaves for the command's thread: its result and, with
    /// `--progress=json`, its line (not the whole snapshot). A batch's commit completes up to
    /// a thousand files at once, faster than the command reports them.
    private struct Finished: Sendable {
        var operand: Submitted
        var result: Result<Copier.Committed, any Error>
        var jsonLine: String?
    }

    /// A directory entry: the directory's device and inode, and the name in it.
    private struct EntryKey: Hashable {
        var device: UInt64
        var inode: UInt64
        var name: [UInt8]
    }

    let options: CommonOptions
    let verb: String
    /// The command's progress: its totals are the sizes of the regular file operands (less
    /// those passed over, plus those that failed before they were regular files).
    private let operation: CommandProgress
    var progress: ManyFilesProgress { operation.progress }
    /// The files of the segments ended so far that were committed and that failed.
    private var filesCommitted = 0
    private var filesFailed = 0
    private var engine: Copier? {
        didSet { currentEngine.withLock { $0 = engine } }
    }
    /// ``engine``, for the walk of `-r` on its own thread: it waits there for the files in
    /// flight to release descriptors.
    let currentEngine = LockedValue<Copier?>(nil)
    /// The files submitted to ``engine`` since its segment started.
    var filesInSegment = 0
    /// Whether the operands are walked for their files (`-r` of compress and decompress): the
    /// walk, not the end of a segment, completes the totals.
    let walks: Bool
    /// Operands done and not yet reported, by position.
    var ready: [Int: Slot] = [:]
    private var nextToReport = 0
    /// The directory entries named by the operands since the files in flight last ended, as
    /// the hash values of their keys: memory per operand stays a word. Two entries that share
    /// one are taken for one, which only makes the second wait as the same entry would.
    private var destinations: Set<Int> = []
    /// `--rm` candidates, until the directories are synced.
    private var removals: [(transfer: Transfer, committed: Copier.Committed, hasWarnings: Bool)] = []
    /// Trees copied by `copy -r --rm` whose copies hold every entry, until their directories are synced.
    var treeMoves: [TreeMove] = []
    /// Operands the engine finished and the command has not yet collected.
    private let finished = LockedValue<[Finished]>([])
    /// Rung by each completion, so the command's thread reports while it waits for the engine.
    private var bell: (stream: AsyncStream<Void>, ring: AsyncStream<Void>.Continuation)?
    var tally = OperandTally()
    var stopStatus: Int32?
    /// Whether the operands are trees (``OperandStep/tree(destination:options:)``).
    let copiesTrees: Bool
    /// What the last line's `"error"` says of trees: the sources that failed whole, and the
    /// entries that failed.
    var treeFailures: [String] = []
    var failedEntries = 0

    /// A batch of `sources`; `copiesTrees`: they are trees; `walks`: they are walked for their
    /// files (`-r` of compress and decompress), whose totals then grow as the walk finds them.
    init(options: CommonOptions, verb: String, sources: [Pathname], copiesTrees: Bool, walks: Bool = false) {
        self.options = options
        self.verb = verb
        self.copiesTrees = copiesTrees
        self.walks = walks
        if copiesTrees || walks {
            // The totals grow as each walk finds files; the last walk completes them.
            operation = CommandProgress(
                ManyFilesProgress(isTotalGrowing: true), mode: options.progress,
                label: sources.count == 1 ? "\(verb) '\(sources[0])'" : "\(verb) \(sources.count) sources")
            return
        }
        let sizes = sources.compactMap { $0 == "-" ? nil : (try? FileStatus.of($0))?.knownSize }
        operation = CommandProgress(
            ManyFilesProgress(totalBytes: sizes.reduce(0, +), totalFiles: sizes.count), mode: options.progress,
            label: "\(verb) \(sizes.count.counted("file"))")
    }

    /// Runs `sources` through the steps `plan` gives them (decided in operand order, each when
    /// its turn comes, after the operands before it) and returns the command's exit status:
    /// 1 if any failed, else 2 if any warned, else 0; 130 when interrupted, 141 (a closed
    /// output pipe) at once.
    ///
    /// - Parameter copiesTrees: whether the steps are trees (`copy -r`/`-a`, which refuses a
    ///   limit on open files too low for a tree's walk first); several sources, or any tree,
    ///   go through the batch, one file operand runs alone.
    static func run(
        _ sources: [Pathname], options: CommonOptions, verb: String, copiesTrees: Bool = false, plan: (Pathname) -> OperandStep
    ) async -> Int32 {
        if copiesTrees && !descriptorsAllowTreeCopy() { return ExitStatus.failure }
        if sources.count == 1 && !copiesTrees { return await runAlone(sources[0], options: options, plan: plan) }
        let batch = OperandBatch(options: options, verb: verb, sources: sources, copiesTrees: copiesTrees)
        for (position, source) in sources.enumerated() where batch.stopStatus == nil {
            await batch.take(plan(source), source: source, at: position, isLast: position == sources.count - 1)
        }
        await batch.endSegment()
        await batch.endProgress()
        return batch.stopStatus ?? batch.tally.status
    }

    /// One operand alone: its transfer draws its own progress and prints its own messages.
    static func runAlone(_ source: Pathname, options: CommonOptions, plan: (Pathname) -> OperandStep) async -> Int32 {
        var tally = OperandTally()
        switch plan(source) {
        case .transfer(let transfer):
            if let status = tally.record(await transfer.run(options: options)) { return status }
        case .skip(let message, let isFailure):
            if let message { Console.message(message) }
            if isFailure { tally.fail() } else { tally.warn() }
        case .moved(let message, _):
            if let message { Console.message(message) }
        case .tree:
            preconditionFailure("a tree is copied by the batch")
        }
        return tally.status
    }

    func take(_ step: OperandStep, source: Pathname, at position: Int, isLast: Bool) async {
        switch step {
        case .tree(let destination, let treeOptions, let moves):
            let move = moves ? TreeMove(source: source, target: Copier.treeTarget(source: source, destination: destination)) : nil
            await copyTree(source, to: destination, options: treeOptions, move: move, at: position, completesTotal: isLast)
        case .skip(let message, let isFailure):
            // Counted in the totals when it is a regular file (the initializer's rule).
            let counted = source == "-" ? nil : (try? FileStatus.of(source)).flatMap { $0.kind == .regular ? $0 : nil }
            if isFailure {
                // A file the operation failed to copy is one of its files: the last line then
                // shows fewer committed than the total.
                if counted == nil { progress.addToTotal(bytes: 0, files: 1) }
                recordFailure(of: source, size: counted?.size ?? 0, message: message)
            } else if let status = counted {
                // Passed over on purpose: not in the totals any more.
                progress.addToTotal(bytes: -status.size, files: -1)
            }
            ready[position] = .skipped(message: message, isFailure: isFailure)
            reportReady()
        case .moved(let message, let size):
            if let size { progress.addToTotal(bytes: -size, files: -1) }
            ready[position] = .moved(message: message)
            reportReady()
        case .transfer(let transfer):
            guard let (_, destination) = transfer.filePaths else {
                // Standard input or output, --test: alone, as before.
                await endSegment()
                guard stopStatus == nil else { return }
                nextToReport = position + 1
                let outcome = await transfer.run(options: options, in: progress)
                switch outcome {
                case .success: filesCommitted += 1
                case .failure: filesFailed += 1
                case .brokenPipe, .cancelled: break
                }
                if let status = tally.record(outcome) { stopStatus = status }
                return
            }
            if let key = Self.entryKey(destination), !destinations.insert(key).inserted {
                // The same entry as an earlier operand's: checked once that one is done.
                await endSegment()
                guard stopStatus == nil else { return }
                destinations.insert(key)
            }
            await submit(transfer, at: position)
        }
    }

    private func submit(_ transfer: Transfer, at position: Int) async {
        if let (source, destination) = transfer.filePaths, let refusal = transfer.createdFileRefusal(destination) {
            // Refused before it starts, as the transfer alone would refuse it.
            recordFailure(of: source, size: (try? FileStatus.of(source))?.size ?? 0, message: refusal.messageNamingForce)
            ready[position] = .refused(transfer, refusal)
            reportReady()
            return
        }
        let engine = startSegment(for: transfer)
        let finished = finished
        let ring = bell?.ring
        let operand = Submitted(position: position, transfer: transfer)
        let json = options.progress == .json
        guard let job = transfer.job(options: options, completion: { outcome in
            let done = Finished(operand: operand, result: outcome.result, jsonLine: json ? outcome.progress.jsonLine() : nil)
            finished.withLock { $0.append(done) }
            ring?.yield()
        }) else { return }
        do {
            try await engine.submit(job)
            filesInSegment += 1
        } catch {
            stopStatus = ExitStatus.interrupted
        }
        collect()
    }

    /// The engine of the files in flight, started for `transfer` (`nil`: a tree) if none is:
    /// its options are the command's, with the modification time of the command's transfers
    /// (a tree's: as `--preserve` says).
    func startSegment(for transfer: Transfer?) -> Copier {
        if let engine { return engine }
        let engine = Copier(
            options: options.copierOptions(keepsModificationTime: transfer?.keepsModificationTime ?? false),
            progress: progress)
        let (stream, ring) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        bell = (stream, ring)
        self.engine = engine
        return engine
    }

    /// Waits for the files in flight, reports them, syncs their directories, then removes the
    /// sources of `--rm`. Every walk of a tree is over: the totals are complete (also when the
    /// last tree failed before its walk ended); the walk of `-r` completes them itself.
    func endSegment() async {
        guard let engine, let bell else { return }
        if !walks { engine.totalIsComplete() }
        filesInSegment = 0
        // Reports each file as it finishes while the engine winds down.
        async let finishing: Copier.Totals = {
            let totals = await engine.finish()
            bell.ring.finish()
            return totals
        }()
        for await _ in bell.stream { collect() }
        let totals = await finishing
        self.engine = nil
        self.bell = nil
        collect()
        filesCommitted += totals.committed
        filesFailed += totals.failed
        let removedFrom = DirectorySyncBatch()
        for removal in removals {
            let directory = removal.committed.isDurableOnceDirectorySynced
                && totals.unsyncedDirectories[removal.transfer.filePaths?.destination.directory ?? "."] == nil
            if removal.transfer.removeSource(
                isDurable: directory, hasWarnings: removal.hasWarnings, opened: removal.committed.report.sourceStatus, options: options,
                removals: removedFrom)
            {
                tally.warn()
            }
        }
        for move in treeMoves {
            // A copy not known to be durable keeps its whole tree.
            if !totals.unsyncedDirectories.isEmpty {
                if !options.quiet { Console.message("kept '\(move.source)': its copy is not known to be durable") }
                tally.warn()
                continue
            }
            for kept in move.removeCopied(force: options.force, removals: removedFrom) {
                if !options.quiet { Console.message("kept \(kept)") }
                tally.warn()
            }
        }
        treeMoves.removeAll()
        if !Transfer.synchronizeRemovals(removedFrom, quiet: options.quiet).isEmpty { tally.warn() }
        removals.removeAll()
        // Files in place that may not survive a crash: a warning, said unless --quiet.
        for (directory, error) in totals.unsyncedDirectories.sorted(by: { $0.key.description < $1.key.description }) {
            if !options.quiet { Console.message("files in '\(directory)' are in place, but \(error)") }
            tally.warn()
        }
        destinations.removeAll()
    }

    /// Counts an operand that failed before any copy of it started as a failed file of the
    /// operation (its `size` as done, as the engine counts a file that failed), with its
    /// `--progress=json` line.
    private func recordFailure(of source: Pathname, size: Int64, message: String?) {
        let snapshot = progress.finished(
            index: progress.reserveIndex(), file: source, bytes: size, error: message ?? "cannot \(verb) '\(source)'")
        if options.progress == .json { Console.writeError(snapshot.jsonLine() + "\n") }
        filesFailed += 1
    }

    /// Ends the command's progress, once, after its last operand: the last bar or JSON line.
    func endProgress() async {
        let interrupted = stopStatus == ExitStatus.interrupted || CommitGate.shared.interruption != nil
        // A tree's copy stops at a signal: the command's status is the signal's.
        if interrupted && copiesTrees { stopStatus = ExitStatus.interrupted }
        let treeFailures = treeFailures + (failedEntries > 0 ? ["\(failedEntries) entries failed"] : [])
        await operation.end(
            interrupted ? .interrupted
                : copiesTrees ? (treeFailures.isEmpty ? .completed : .failed(treeFailures.joined(separator: "; ")))
                : filesFailed > 0 ? .failed("\(filesFailed) of \(filesCommitted + filesFailed) files failed")
                : stopStatus != nil || tally.status == ExitStatus.failure ? .failed("not every operand was copied") : .completed)
    }

    /// Takes the outcomes the engine finished, prints their `--progress=json` lines, and
    /// reports what is ready in operand order.
    private func collect() {
        let outcomes = finished.withLock { outcomes in
            defer { outcomes.removeAll() }
            return outcomes
        }
        for done in outcomes {
            if let line = done.jsonLine { Console.writeError(line + "\n") }
            ready[done.operand.position] = .finished(done.operand.transfer, done.result)
            // Reported as soon as its line is out (when its turn has come), not after the lines
            // of the files that finished with it: a signal after a file's line never finds the
            // file unreported.
            reportReady()
        }
        reportReady()
    }

    func reportReady() {
        while let slot = ready.removeValue(forKey: nextToReport) {
            nextToReport += 1
            switch slot {
            case .skipped(let message, let isFailure):
                if let message { Console.message(message) }
                if isFailure { tally.fail() } else { tally.warn() }
            case .moved(let message), .noted(let message):
                if let message { Console.message(message) }
            case .finished(let transfer, let outcome):
                let result = transfer.report(outcome, options: options)
                if case .success(let warnings) = result, transfer.removesSource, case .success(let committed) = outcome {
                    removals.append((transfer, committed, !warnings.isEmpty))
                }
                if let status = tally.record(result), stopStatus == nil { stopStatus = status }
            case .refused(let transfer, let error):
                let (result, message) = transfer.classify(error)
                if let message { Console.message(message) }
                _ = tally.record(result)
            }
        }
    }

    /// The hash value of the directory entry `path` names, if its directory exists.
    private static func entryKey(_ path: Pathname) -> Int? {
        guard let directory = try? FileStatus.of(path.directory) else { return nil }
        return EntryKey(device: directory.device, inode: directory.inode, name: path.lastComponent.bytes).hashValue
    }
}
