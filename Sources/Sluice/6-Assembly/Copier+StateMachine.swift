extension Copier {
    /// What the engine tells an observer (tests) as it happens, on the thread where it happens.
    package enum Event: Sendable, Hashable {
        /// A file was copied in one step on its slot's thread (``copySmallFile(_:copyOptions:share:on:)``).
        case copiedInOneStep
        /// A sealed file joined its sync batch, to be renamed after the batch's `syncfs(2)`.
        case sealedIntoBatch
        /// A file found the process out of descriptors and waits for the engine to release some.
        case waitingForDescriptors
    }

    /// The copier's decisions, as a value: events in (a job submitted, taken by a slot, started,
    /// ended; a batch that let its files go; a cancellation; a file out of descriptors), actions
    /// out (a waiter to resume, a batch to commit now, a wait to end), the invariants checked
    /// after every event in debug builds. ``Copier`` keeps it in a ``LockedCondition`` and runs
    /// the actions after the lock is released; the threads that wait for descriptors block on
    /// that condition, woken by the events that release them.
    ///
    /// Generic over the jobs it holds and the handle of a slot waiting for room, so tests drive
    /// it with plain integers. Time comes in with the events (`now`), never from a clock of its own.
    ///
    /// Invariants: the counts are never negative; a file waits for descriptors only on a slot's
    /// thread (`filesWaitingForDescriptors <= running`); a slot waits for room only while
    /// `durableWidth` files are in flight.
    struct StateMachine<Item, Waiter> {
        /// The next job's index.
        private(set) var nextIndex = 0
        /// What the files that ended came to.
        var totals = Totals()
        /// Jobs handed over and not yet taken by a slot: a cancellation completes them.
        private(set) var waiting: [Int: Item] = [:]
        /// Set by ``cancel()``: nothing is submitted or started from then on.
        private(set) var isCancelled = false
        /// Jobs a slot took that have not started yet (each waits for room or its share of the budget).
        private(set) var dispatching = 0
        /// Files on their slots' threads now (a sealed one until its batch holds it).
        private(set) var running = 0
        /// Files admitted and not yet ended.
        private(set) var inFlight = 0
        /// The slot waiting for ``inFlight`` to fall below ``durableWidth``: one at most, as a
        /// slot admits its job while it holds the intake's turn.
        private var admissionWaiter: Waiter?
        /// Counts the events that release descriptors: a file ended (or sealed and in its batch),
        /// a batch that let its files go.
        private(set) var releases = 0
        /// The waits for descriptors under way, by ticket.
        private var descriptorWaits: [Int: DescriptorWait] = [:]
        private var nextTicket = 0
        /// Files (not a tree's walk) waiting for descriptors now.
        private(set) var filesWaitingForDescriptors = 0
        /// The durable files in flight at most.
        let durableWidth: Int
        /// How long a wait for descriptors lasts while nothing moves.
        let patience: Duration
        /// The engine's worker and its batch, set once each runs (what ``cancel()`` stops).
        var worker: Task<Void, Never>?
        var batch: SyncBatch?

        init(durableWidth: Int, patience: Duration) {
            self.durableWidth = durableWidth
            self.patience = patience
        }

        // MARK: Jobs

        /// A job handed over: numbered, and held until a slot takes it.
        ///
        /// - Throws: `CancellationError` once the engine is cancelled.
        mutating func submit(_ make: (Int) -> Item) throws(CancellationError) -> Item {
            defer { checkInvariants() }
            guard !isCancelled else { throw CancellationError() }
            defer { nextIndex += 1 }
            let item = make(nextIndex)
            waiting[nextIndex] = item
            return item
        }

        /// A submission whose job the intake refused: `true` if it is withdrawn, `false` if a
        /// slot or the winding down took it meanwhile (its completion will be called).
        mutating func withdraw(_ index: Int) -> Bool {
            waiting.removeValue(forKey: index) != nil
        }

        /// Stops everything: the worker and batch to cancel, the first time.
        mutating func cancel() -> (Task<Void, Never>?, SyncBatch?) {
            defer { checkInvariants() }
            isCancelled = true
            return (worker, batch)
        }

        /// What became of a job a slot took.
        enum Taking {
            /// Failed or completed meanwhile (no longer waiting): nothing to do.
            case gone
            /// The engine was cancelled: the job is to fail, never started.
            case cancelled
            /// Taken: admit it next (``admit(durable:)``).
            case taken
        }

        /// A slot took the job numbered `index` from the intake.
        mutating func take(_ index: Int) -> Taking {
            defer { checkInvariants() }
            guard waiting.removeValue(forKey: index) != nil else { return .gone }
            if isCancelled { return .cancelled }
            dispatching += 1
            return .taken
        }

        /// Counts a taken job in flight if it fits: a durable file only while fewer than
        /// ``durableWidth`` are (it may hold a directory to sync); any other always.
        ///
        /// - Returns: whether it was admitted; if not, the slot registers with ``wait(_:durable:)``.
        mutating func admit(durable: Bool) -> Bool {
            defer { checkInvariants() }
            guard !durable || inFlight < durableWidth else { return false }
            inFlight += 1
            return true
        }

        /// A slot whose job did not fit waits for a file to end; `false` if one ended since (try
        /// ``admit(durable:)`` again at once).
        mutating func wait(_ waiter: Waiter, durable: Bool) -> Bool {
            defer { checkInvariants() }
            guard durable && inFlight >= durableWidth else { return false }
            precondition(admissionWaiter == nil, "two slots admitting at once")
            admissionWaiter = waiter
            return true
        }

        /// An admitted job starts on its slot's thread.
        mutating func start() {
            defer { checkInvariants() }
            dispatching -= 1
            running += 1
        }

        /// A job taken and never started (cancelled, or its share of the budget refused);
        /// `admitted` if it was counted in flight. Returns the slot to let try again.
        mutating func drop(admitted: Bool) -> Waiter? {
            defer { checkInvariants() }
            dispatching -= 1
            return admitted ? leave() : nil
        }

        /// What follows a file's end on its slot's thread.
        struct Ending {
            /// The slot waiting for room, to resume.
            var waiter: Waiter?
            /// Files wait for descriptors while a file was sealed into the batch: commit it now.
            var commitsBatch: Bool
        }

        /// A file left its slot's thread: ended, or `sealed` and in its batch.
        mutating func end(sealed: Bool) -> Ending {
            defer { checkInvariants() }
            running -= 1
            releases += 1
            return Ending(waiter: leave(), commitsBatch: sealed && !descriptorWaits.isEmpty)
        }

        private mutating func leave() -> Waiter? {
            inFlight -= 1
            defer { admissionWaiter = nil }
            return admissionWaiter
        }

        /// A file completed (committed or failed): counted in the totals.
        mutating func complete(_ result: Result<Committed, any Error>) {
            releases += 1
            switch result {
            case .success(let committed):
                totals.committed += 1
                totals.bytesRead += committed.report.bytesRead
                totals.bytesWritten += committed.report.bytesWritten
            case .failure:
                totals.failed += 1
            }
        }

        /// A batch committed and let its files go.
        mutating func batchReleased() {
            releases += 1
        }

        /// The jobs never taken, in the order they were submitted, to fail once the slots ended.
        mutating func takeLeftovers() -> [Item] {
            defer { waiting.removeAll() }
            return waiting.sorted { $0.key < $1.key }.map(\.value)
        }

        /// Whether no job handed over holds descriptors: none waiting, none being started, none
        /// on its thread (a sealed file's are its batch's), or the engine is cancelled.
        var noFileHoldsDescriptors: Bool {
            isCancelled || (running == 0 && dispatching == 0 && waiting.isEmpty)
        }

        // MARK: Descriptors

        /// One wait for descriptors.
        struct DescriptorWait {
            let isFile: Bool
            let releasesAtStart: Int
            /// The bytes the files had moved when last seen moving, and when.
            var moved: Int64
            var lastMove: ContinuousClock.Instant
        }

        /// A file (or, `isFile` false, a tree's walk) found the process out of descriptors:
        /// its wait's ticket.
        mutating func beginDescriptorWait(isFile: Bool, moved: Int64, now: ContinuousClock.Instant) -> Int {
            defer { checkInvariants() }
            defer { nextTicket += 1 }
            descriptorWaits[nextTicket] = DescriptorWait(isFile: isFile, releasesAtStart: releases, moved: moved, lastMove: now)
            if isFile { filesWaitingForDescriptors += 1 }
            return nextTicket
        }

        /// Whether the wait `ticket` is over: `true` once descriptors were released (try again),
        /// `false` when the engine holds none it would release (the open fails for good), `nil`
        /// to wait on. `batchPending`: the sealed files waiting in the batch now.
        func descriptorWaitOutcome(_ ticket: Int, batchPending: Int) -> Bool? {
            guard let wait = descriptorWaits[ticket] else { return false }
            if isCancelled { return false }
            if releases != wait.releasesAtStart { return true }
            // Files that wait here release nothing until they are let go; the walk is not a file.
            if running - filesWaitingForDescriptors <= 0 && batchPending == 0 { return false }
            return nil
        }

        /// The time the wait `ticket` lasts from now before ``patienceElapsed(_:moved:batchPending:now:)``.
        func patienceLeft(_ ticket: Int, now: ContinuousClock.Instant) -> Duration {
            guard let wait = descriptorWaits[ticket] else { return .zero }
            return max(.zero, wait.lastMove + patience - now)
        }

        /// The patience of wait `ticket` ran out: it goes on (`nil`) while bytes moved since it
        /// last looked (`moved`, the files' bytes read and written) or a batch is pending;
        /// otherwise it ends in `false` (a file that may never end, a FIFO's writer or a stalled
        /// mount, does not hold the others for ever).
        mutating func patienceElapsed(_ ticket: Int, moved: Int64, batchPending: Int, now: ContinuousClock.Instant) -> Bool? {
            defer { checkInvariants() }
            if let outcome = descriptorWaitOutcome(ticket, batchPending: batchPending) { return outcome }
            guard var wait = descriptorWaits[ticket] else { return false }
            if moved != wait.moved || batchPending > 0 {
                (wait.moved, wait.lastMove) = (moved, now)
                descriptorWaits[ticket] = wait
                return nil
            }
            return now - wait.lastMove >= patience ? false : nil
        }

        /// The wait `ticket` ended.
        mutating func endDescriptorWait(_ ticket: Int) {
            defer { checkInvariants() }
            if descriptorWaits.removeValue(forKey: ticket)?.isFile == true { filesWaitingForDescriptors -= 1 }
        }

        /// Stops the program if an invariant does not hold (debug builds only).
        func checkInvariants() {
            assert(dispatching >= 0 && running >= 0 && inFlight >= 0, "Copier: a negative count")
            assert(filesWaitingForDescriptors <= running, "Copier: a file waits for descriptors off its thread")
            assert(admissionWaiter == nil || inFlight >= durableWidth, "Copier: a slot waits while there is room")
        }
    }
}
