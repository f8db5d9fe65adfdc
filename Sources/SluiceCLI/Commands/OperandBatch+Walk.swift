import Sluice

extension OperandBatch {
    /// What the walk of `-r` hands the batch, in the walk's order.
    enum WalkItem: Sendable {
        /// A file to take: an operand that is not a directory, or a file found in one.
        case source(Pathname)
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
            await Self.walk(operands, into: found, verbose: verbose, passOver: passOver, engine: engine)
        }
        var items = found.makeAsyncIterator()
        // One file in all runs alone, with the progress and messages of one file, as without -r.
        var first: [WalkItem] = []
        do {
            while first.count < 2, let item = try await items.next() { first.append(item) }
        } catch {
            walk.cancel()
            return ExitStatus.interrupted
        }
        if first.count == 1, case .source(let source) = first[0], CommitGate.shared.interruption == nil {
            return await runAlone(source, options: options, plan: plan)
        }
        var position = 0
        var pending = first[...]
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
            defer { position += 1 }
            switch item {
            case .source(let source):
                // In the totals as an operand of a command without -r is (its rule: a regular file's size).
                if source != "-", let status = try? FileStatus.of(source), status.kind == .regular {
                    batch.progress.addToTotal(bytes: status.size, files: 1)
                }
                await batch.take(plan(source), source: source, at: position, isLast: false)
                if batch.filesInSegment >= filesPerSegment { await batch.endSegment() }
            case .failure(let message):
                batch.ready[position] = .skipped(message: message, isFailure: true)
                batch.reportReady()
            case .passedOver(let message):
                batch.ready[position] = .noted(message: message)
                batch.reportReady()
            }
        }
        walk.cancel()
        batch.progress.totalIsComplete()
        await batch.endSegment()
        await batch.endProgress()
        if CommitGate.shared.interruption != nil && batch.stopStatus == nil { return ExitStatus.interrupted }
        return batch.stopStatus ?? batch.tally.status
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
            guard operand != "-", (try? FileStatus.of(operand))?.kind == .directory else {
                guard (try? await found.send(.source(operand))) != nil else { return }
                continue
            }
            var walker = TreeWalker(
                root: operand, followsRootLink: true, maximumOpenDirectories: DescriptorBudget.current.directoriesPerSide)
            walker.releasesDescriptors = { engine.withLock { $0 }?.waitForReleasedDescriptors(holding: 0) ?? false }
            if DescriptorBudget.current.copiesOneFileAtATime {
                walker.beforeOpeningDirectory = { engine.withLock { $0 }?.waitUntilNoFileHoldsDescriptors() }
            }
            while let event = walker.next() {
                if CommitGate.shared.interruption != nil || Task.isCancelled { return }
                let item: WalkItem
                switch event {
                case .file(let entry):
                    if let reason = passOver(entry) {
                        guard verbose else { continue }
                        item = .passedOver(reason)
                    } else {
                        item = .source(entry.path)
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
