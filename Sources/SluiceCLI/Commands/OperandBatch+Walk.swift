import Sluice

extension OperandBatch {
    /// What the walk of `-r` hands the batch, in the walk's order.
    enum WalkItem: Sendable {
        /// A file to take: an operand that is not a directory, or a file found in one; its size
        /// for the totals when it is a regular file (`FileStatus.knownSize`, as the walk saw it).
        case source(Pathname, size: Int64?)
        /// An entry the walk could not read: its message; the command then fails.
        case failure(String)
        /// An entry passed over (`-v` names it): its message.
        case passedOver(String)
    }

    /// `compress -r` and `decompress -r`, as `gzip -r`: each directory operand is walked
    /// (`TreeWalker`, symbolic links not followed, names as bytes) and each file it finds that
    /// `passOver` does not pass over is an operand of its own, taken as the walk finds it
    /// through the same steps as any operand (``run(_:options:verb:copiesTrees:plan:)``).
    /// The walk runs ahead of the copies by at most a channel of 64 names, on a thread of its
    /// own, and a segment of the batch ends every ``filesPerSegment`` files (its directories
    /// synced, its sources removed), so memory does not grow with the number of files; the
    /// totals grow as the walk finds files, and are complete once it ends. Beside the files in
    /// flight, the walk keeps within the descriptors the process allows as a tree's does
    /// (`DescriptorBudget`). An entry that cannot be read is named in its turn and fails the
    /// command (exit 1); one passed over is named with `verbose`.
    ///
    /// - Returns: the command's exit status, as ``run(_:options:verb:copiesTrees:plan:)``'s.
    static func run(
        walking operands: [Pathname], options: CommonOptions, verb: String, verbose: Bool,
        passOver: @escaping @Sendable (TreeWalker.Entry) -> String?, plan: (Pathname) -> OperandStep
    ) async -> Int32 {
        let found = BoundedChannel<WalkItem>(capacity: 64, lowWatermark: 32)
        let batch = OperandBatch(options: options, verb: verb, sources: operands, copiesTrees: false, walks: true)
        let engine = batch.currentEngine
        let walk = Task(executorPreference: BlockingIOExecutor(label: "sluice.walk")) {
            await withTaskCancellationHandler {
                await Self.walk(operands, into: found, verbose: verbose, passOver: passOver, engine: engine)
            } onCancel: {
                engine.withLock { $0 }?.wakeWaiters()  // where the walk waits for descriptors
            }
        }
        var items = found.makeAsyncIterator()
        // One file in all runs alone, with the progress and messages of one file, as without -r.
        guard let (sources, walkFailed) = await firstTwoFiles(&items) else {
            walk.cancel()
            _ = await walk.value
            return ExitStatus.interrupted
        }
        if sources.count == 1, CommitGate.shared.interruption == nil {
            let status = await runAlone(sources[0].path, options: options, plan: plan)
            // An entry of the tree that could not be read fails the command, as a failed operand does.
            return walkFailed && (status == ExitStatus.success || status == ExitStatus.warning) ? ExitStatus.failure : status
        }
        if walkFailed { batch.tally.fail() }
        var position = 0
        var pending = sources.map { WalkItem.source($0.path, size: $0.size) }[...]
        while batch.stopStatus == nil, CommitGate.shared.interruption == nil {
            let item: WalkItem
            if let next = pending.popFirst() {
                item = next
            } else {
                do {
                    guard let next = try await items.next() else { break }
                    item = next
                } catch {
                    break  // cancelled: the status below is the signal's
                }
            }
            await batch.take(item, at: position, plan: plan)
            position += 1
        }
        walk.cancel()
        _ = await walk.value  // cancelled, it stops at its next entry or send
        batch.progress.totalIsComplete()
        await batch.endSegment()
        await batch.endProgress()
        if CommitGate.shared.interruption != nil && batch.stopStatus == nil { return ExitStatus.interrupted }
        return batch.stopStatus ?? batch.tally.status
    }

    /// Reads the walk's items until its first two files (or its end), saying meanwhile what it
    /// passes over or cannot read: the files, and whether an entry could not be read; `nil` when
    /// the command was cancelled.
    private static func firstTwoFiles(
        _ items: inout BoundedChannel<WalkItem>.Iterator
    ) async -> (sources: [(path: Pathname, size: Int64?)], failed: Bool)? {
        var (sources, failed) = ([(path: Pathname, size: Int64?)](), false)
        do {
            while sources.count < 2, let item = try await items.next() {
                switch item {
                case .source(let source, let size): sources.append((source, size))
                case .failure(let message): Console.message(message); failed = true
                case .passedOver(let message): Console.message(message)
                }
            }
        } catch {
            return nil
        }
        return (sources, failed)
    }

    /// Takes one item of the walk at `position`: a file as an operand (its size in the totals,
    /// as a regular file operand's), ending the segment every ``filesPerSegment`` files; a
    /// message in its turn.
    private func take(_ item: WalkItem, at position: Int, plan: (Pathname) -> OperandStep) async {
        switch item {
        case .source(let source, let size):
            if let size { progress.addToTotal(bytes: size, files: 1) }
            await take(plan(source), source: source, at: position, isLast: false)
            if filesInSegment >= Self.filesPerSegment { await endSegment() }
        case .failure(let message):
            ready[position] = .skipped(message: message, isFailure: true)
            reportReady()
        case .passedOver(let message):
            ready[position] = .noted(message: message)
            reportReady()
        }
    }

    /// The files of `-r` whose sources a segment removes at once, after one sync of their
    /// directories: what the batch remembers of its files in between is bounded by it.
    static let filesPerSegment = 4096

    /// Walks `operands` into `found`, then finishes it; stops when the task is cancelled or a
    /// signal came. Blocking calls: on the walk's own thread. Out of descriptors, it waits for
    /// `engine`'s files to release theirs, and opens at most as many directories as a tree's
    /// walk (`DescriptorBudget/directoriesPerSide`).
    private static func walk(
        _ operands: [Pathname], into found: BoundedChannel<WalkItem>, verbose: Bool,
        passOver: @Sendable (TreeWalker.Entry) -> String?, engine: LockedValue<Copier?>
    ) async {
        defer { found.finish() }
        for operand in operands {
            let status = operand == "-" ? nil : try? FileStatus.of(operand)
            guard let status, status.kind == .directory else {
                guard (try? await found.send(.source(operand, size: status?.knownSize))) != nil else { return }
                continue
            }
            var walker = TreeWalker(
                root: operand, followsRootLink: true, maximumOpenDirectories: DescriptorBudget.current.directoriesPerSide)
            walker.sharesDescriptors { engine.withLock { $0 } }
            while let event = walker.next() {
                if CommitGate.shared.interruption != nil || Task.isCancelled { return }
                let item: WalkItem
                switch event {
                case .file(let entry):
                    if let reason = passOver(entry) {
                        guard verbose else { continue }
                        item = .passedOver(reason)
                    } else {
                        item = .source(entry.path, size: entry.status.knownSize)
                    }
                case .failure(let error), .unreadableDirectory(_, let error):
                    item = .failure(error.description)
                case .enterDirectory, .leaveDirectory:
                    continue
                }
                guard (try? await found.send(item)) != nil else { return }
            }
        }
    }
}
