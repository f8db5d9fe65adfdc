import CSluiceShims
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Copier {
    /// Files whose copies are done but not yet durable nor renamed: their temporary files hold
    /// their data and attributes, still open. The engine makes them durable together, by one
    /// `syncfs(2)` per file system instead of one `fsync(2)` per file (each of which, on a
    /// journaled file system, waits for a commit of the journal and a flush of the device's
    /// cache), and renames them (``Copier/commit(_:of:)``), on a thread of the batch's own while
    /// the next files copy.
    ///
    /// A batch is committed once it holds ``maximumFiles`` files or ``maximumBytes`` bytes,
    /// ``maximumWait`` after its first file was sealed (so a file never waits on another that
    /// may not end: a FIFO's writer, a slow source), and when the engine ends. ``append(_:)``
    /// waits while ``maximumPending`` files are sealed and not yet committed (a slow `syncfs(2)`
    /// slows the copies; the open descriptors stay bounded).
    ///
    /// Concurrency contract: ``append(_:)`` from any task, ``cancel()`` from any thread;
    /// ``finish()`` once, after the last ``append(_:)``. Batches are committed one at a time,
    /// in order, on the batch's thread.
    final class SyncBatch: Sendable {
        /// One sealed file and what its completion reports.
        struct Entry: Sendable {
            var receipt: Receipt
            var file: SealedFile
            var report: CopyReport
            var warnings: [StageWarning]
        }

        /// The most bytes written and waiting for one `syncfs(2)` (dirty in the page cache).
        static let maximumBytes: Int64 = 256 << 20

        /// The most files waiting for one `syncfs(2)`: half of ``maximumPending``.
        let maximumFiles: Int
        /// The most files sealed and not yet committed: the process's
        /// ``DescriptorBudget/sealedFiles``, each holding a descriptor open (64 under
        /// `ulimit -n 256`, about 254 under the usual 1,024); 256 where that share is 0, the files
        /// being closed while they wait then.
        let maximumPending: Int
        /// The most directories the files of one batch are in (each may hold a descriptor):
        /// the process's ``DescriptorBudget/directoriesToSync``; a file in one more directory
        /// has the batch so far committed first.
        let maximumDirectories: Int

        /// The wait after a batch of one or two files: files that come one at a time (a slow
        /// source, `--limit-rate`) share a `syncfs(2)` per 50 ms, not one each (500 files of
        /// 3 KB at 300 KB/s: 470 `syncfs(2)` calls with the short wait alone, 86 with 50 ms).
        static let slowWait = Duration.milliseconds(50)

        /// The longest a sealed file waits for its batch to fill (the copier's
        /// ``Options/syncBatchWaitMilliseconds``), or ``slowWait`` after a batch of one or two files.
        let maximumWait: Duration

        private struct State {
            var entries: [Entry] = []
            var bytes: Int64 = 0
            /// Counts batches begun: a deadline is for the batch it was set for.
            var generation = 0
            /// The files of the last batch taken (none yet: many).
            var lastBatchCount = Int.max
            /// Files appended and not yet let go: committed (or removed), and their entries
            /// (which hold their directories' descriptors) released.
            var pending = 0
            /// The directories of the files in ``entries``.
            var directories: Set<ObjectIdentifier> = []
            /// Appends waiting for ``pending`` to fall below the maximum.
            var waiters: [CheckedContinuation<Void, Never>] = []
            var isCancelled = false
        }

        private let state = LockedValue(State())
        /// The batch's thread, started with its first file: a copier whose files never join a
        /// batch (``Copier/Options/batchesSyncs`` off, `--no-fsync`) starts none.
        private let startedExecutor = LockedValue<BlockingIOExecutor?>(nil)

        private var executor: BlockingIOExecutor {
            startedExecutor.withLock { started in
                if let started { return started }
                let executor = BlockingIOExecutor(label: "sluice.sync-batch")
                started = executor
                return executor
            }
        }
        /// The engine whose sealed files the batch holds: it makes each batch durable and
        /// renames it, or, after ``cancel()``, removes it (``Copier/commit(_:of:)``), on the
        /// batch's thread. Held strongly until the engine's worker drops the batch.
        private let copier: Copier

        /// A batch for `copier`'s files, within the process's ``DescriptorBudget``.
        init(for copier: Copier) {
            let sealed = DescriptorBudget.current.sealedFiles
            maximumPending = sealed > 0 ? sealed : 256
            precondition(maximumPending >= 2, "maximumPending must be at least 2")
            maximumFiles = maximumPending / 2
            maximumDirectories = max(1, DescriptorBudget.current.directoriesToSync)
            maximumWait = .milliseconds(copier.options.syncBatchWaitMilliseconds)
            self.copier = copier
        }

        var isCancelled: Bool { state.withLock { $0.isCancelled } }

        /// The files sealed and not yet let go (committed or removed, and released).
        var pendingCount: Int { state.withLock { $0.pending } }

        /// Adds a sealed file, after waiting while ``maximumPending`` are; commits the batch if
        /// it is full, or sets its deadline if it is the batch's first file.
        func append(_ entry: Entry) async {
            while state.withLock({ $0.pending >= maximumPending && !$0.isCancelled }) {
                await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                    let waits = state.withLock { state in
                        guard state.pending >= maximumPending && !state.isCancelled else { return false }
                        state.waiters.append(waiter)
                        return true
                    }
                    if !waits { waiter.resume() }
                }
            }
            let directory = entry.file.location.directory.map(ObjectIdentifier.init)
            let (earlier, full, deadline, wait) = state.withLock { state -> (Taken?, Taken?, Int?, Duration) in
                // A file in one directory too many: the batch so far is committed first.
                var earlier: Taken?
                if let directory, !state.directories.contains(directory), state.directories.count >= maximumDirectories {
                    earlier = Self.take(&state)
                }
                if state.entries.count == state.entries.capacity {
                    // Doubling, but never past a full batch (growing by itself, the array would
                    // double for a full batch's last file).
                    state.entries.reserveCapacity(Swift.min(maximumFiles, Swift.max(16, 2 * state.entries.capacity)))
                }
                state.entries.append(entry)
                state.bytes += entry.report.bytesWritten
                state.pending += 1
                if let directory { state.directories.insert(directory) }
                if state.entries.count >= maximumFiles || state.bytes >= Self.maximumBytes {
                    return (earlier, Self.take(&state), nil, maximumWait)
                }
                // Files that come one at a time (a slow source, a rate limit) wait longer, so
                // that a batch is not one `syncfs(2)` per file.
                let wait = state.lastBatchCount <= 2 ? Swift.max(maximumWait, Self.slowWait) : maximumWait
                return (earlier, nil, state.entries.count == 1 ? state.generation : nil, wait)
            }
            if let earlier { schedule(earlier) }
            if let full { schedule(full) }
            if let deadline {
                // A timed wait of the batch's own thread (no descriptor, no Dispatch timer), in
                // order with finish() and the full batches. It holds the batch (and its engine,
                // which the batch holds) until the deadline or finish(), which
                // drops it: not weakly, because a weak reference still pending when the process
                // exits is reported as a leak by LeakSanitizer (its side table is reached only
                // through a tagged pointer).
                executor.execute(after: wait) { [self] in
                    if let due = state.withLock({ $0.generation == deadline ? Self.take(&$0) : nil }) { run(due) }
                }
            }
        }

        /// Commits the files sealed so far now, if any, on the batch's thread, without waiting
        /// for the batch to fill or its deadline: what a copy that ran out of descriptors does.
        func commitNow() {
            if let due = state.withLock({ Self.take(&$0) }) { schedule(due) }
        }

        /// Removes, instead of committing, every file not yet renamed (from now on), and lets
        /// waiting appends through.
        func cancel() {
            let waiters = state.withLock { state in
                state.isCancelled = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }

        /// Commits (or, once cancelled, removes) what is left, and returns once every batch is
        /// done.
        func finish() async {
            // No file joined a batch (`--no-fsync`, one file synced by its own fsync(2)): no
            // thread to start, nothing to commit.
            guard startedExecutor.withLock({ $0 }) != nil else { return }
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                executor.execute { [self] in
                    if let rest = state.withLock({ Self.take(&$0) }) { run(rest) }
                    // Every deadline set so far is of a batch now committed.
                    executor.cancelTimedWork()
                    done.resume()
                }
            }
        }

        /// A batch taken for its commit. It holds the entries until the batch's thread takes
        /// them, so that once committed they are released there, at a known point, and not
        /// whenever the last copy held by a caller or a closure goes.
        typealias Taken = LockedValue<[Entry]>

        private func schedule(_ taken: Taken) {
            executor.execute { [self] in run(taken) }
        }

        /// Commits a batch on the batch's thread, releases its entries, then lets files that
        /// wait for descriptors try again (once the entries, which hold their directories'
        /// descriptors, are released, not when the files complete) and waiting appends through.
        private func run(_ taken: Taken) {
            let count = commit(taken)
            released()
            let waiters = state.withLock { state in
                state.pending -= count
                guard state.pending < maximumPending else { return [CheckedContinuation<Void, Never>]() }
                defer { state.waiters = [] }
                return state.waiters
            }
            // Again once the count is lower: a file that began to wait for descriptors between
            // the two saw the batch still pending.
            released()
            for waiter in waiters { waiter.resume() }
        }

        /// Tells the engine that a batch let its files go (``StateMachine/batchReleased()``).
        private func released() {
            copier.state.withLock { $0.batchReleased() }
        }

        /// Commits the entries `taken` holds and returns their count; they are released when
        /// it returns.
        private func commit(_ taken: Taken) -> Int {
            let entries = taken.take(leaving: [])
            copier.commit(entries, of: self)
            return entries.count
        }

        /// The batch so far, `nil` when it holds no file; a new batch begins.
        private static func take(_ state: inout State) -> Taken? {
            if !state.entries.isEmpty { state.lastBatchCount = state.entries.count }
            defer {
                state.entries = []
                state.bytes = 0
                state.directories = []
                state.generation += 1
            }
            return state.entries.isEmpty ? nil : Taken(state.entries)
        }
    }

    /// Makes the files of a batch durable and renames them: one `syncfs(2)` per file system of
    /// their directories (it waits for every writer on that file system, not only Sluice's),
    /// then for each file in order the check of its write-back
    /// (``SealedFile/makeDurable(fsyncs:)``), its naming at the commit point and `close(2)`
    /// (``SealedFile/rename()``), its directory's record (synced once by
    /// ``finish()``), and its completion. The `syncfs(2)` writes the data of all at once; each
    /// file's own check then decides whether its data is durable (a `syncfs(2)` may report
    /// another file's error, and before Linux 5.8 none): `sync_file_range(2)` where that sees
    /// the file's pages (``checksPagesOfItsFiles(_:)``), else, and wherever the `syncfs(2)`
    /// failed, an `fsync(2)` of the file. A file whose check fails fails (its temporary
    /// removed, nothing renamed);
    /// a rename refused by an interruption, or after the engine was cancelled, fails its file
    /// with `CancellationError`.
    ///
    /// Blocks: runs on the batch's thread. Once `batch` is cancelled (the engine was), the
    /// files not yet renamed are removed instead, and fail with `CancellationError`.
    func commit(_ entries: [SyncBatch.Entry], of batch: SyncBatch) {
        // Per file system: whether each file gets an fsync(2) of its own after the syncfs(2):
        // unless the file system is one whose written pages a sync_file_range(2) of the file
        // checks, and its syncfs(2) succeeded (a directory that cannot be looked at: fsync too).
        // Once cancelled, nothing is synced: every file is removed below.
        var fileSystems: [UInt64: Bool] = [:]
        var devices: [ObjectIdentifier: UInt64] = [:]
        let fsyncs = entries.map { entry -> Bool in
            if batch.isCancelled { return true }
            let device = try? Self.fileSystem(of: entry.file, known: &devices) { descriptor, device in
                guard fileSystems[device] == nil else { return }
                let checked = (try? descriptor.fileSystemType()).map(Self.checksPagesOfItsFiles) ?? false
                let synced = (try? ErrorNumber.retryingInterrupts { system.synchronizeFileSystem(descriptor.rawValue) }.get()) != nil
                fileSystems[device] = !synced || !checked
            }
            return device.flatMap { fileSystems[$0] } ?? true
        }
        for (entry, fsyncs) in zip(entries, fsyncs) {
            let result: Result<Committed, any Error>
            // Whether rename() ran: it closes the descriptor, whether it names the file or fails.
            var renaming = false
            do {
                if batch.isCancelled { throw CancellationError() }
                try entry.file.makeDurable(fsyncs: fsyncs)
                if batch.isCancelled { throw CancellationError() }
                renaming = true
                try entry.file.rename()
                directories.record(directoryOf: entry.file.location)
                entry.file.unregister()
                result = .success(Committed(report: entry.report, warnings: entry.warnings, isDurableOnceDirectorySynced: true))
            } catch {
                entry.file.discard(closed: renaming)
                result = .failure(error)
            }
            complete(entry.receipt, result, bytes: entry.report.bytesRead)
        }
    }

    /// File systems whose files' pages are their own, where `sync_file_range(2)` on a file
    /// sees its write-back errors: ext4, XFS, Btrfs, bcachefs, tmpfs. Not overlayfs (the pages
    /// are the upper file's, which only an `fsync(2)` reaches), FUSE, network file systems and
    /// the rest: each file there gets an `fsync(2)`.
    static func checksPagesOfItsFiles(_ type: FileSystemType) -> Bool {
        [.ext4, .xfs, .btrfs, .bcachefs, .tmpfs].contains(type)
    }

    /// The device of the directory that holds `file`, with `body` given a descriptor on it: the
    /// directory's own (looked up once per directory in `known`), or the parent path opened.
    private static func fileSystem(
        of file: SealedFile, known: inout [ObjectIdentifier: UInt64], _ body: (Descriptor, UInt64) -> Void
    ) throws(FileError) -> UInt64 {
        if let handle = file.location.directory {
            let key = ObjectIdentifier(handle)
            let device: UInt64
            if let found = known[key] {
                device = found
            } else {
                device = try handle.status().device
                known[key] = device
            }
            body(handle.descriptor, device)
            return device
        }
        let directory = file.destination.directory
        let descriptor = try Descriptor.open(directory, O_RDONLY | O_DIRECTORY)
        return try descriptor.closeAfter { () throws(FileError) in
            let device: UInt64
            do throws(ErrorNumber) { device = try descriptor.status().device } catch { throw FileError.fstat(path: directory, errno: error) }
            body(descriptor, device)
            return device
        }
    }
}
