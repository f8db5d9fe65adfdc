/// The slots of ``Copier``: each takes the next job itself when it ends a file.
extension Copier {
    /// One slot: takes jobs until ``intake`` ends (or is cancelled: what is buffered is never
    /// started), each once there is room for it (a durable file only while fewer than
    /// ``durableWidth`` files are in flight, waited for before the next slot may take a job, so
    /// jobs start in order and one at most waits) and its share of the budget.
    func serve(
        _ jobs: BoundedChannel<Indexed>.SharedIterator, on executor: BlockingIOExecutor, batch: SyncBatch, share: Int
    ) async {
        // The job goes into a box at once: the slot holds it (and so its directories'
        // descriptors) only until `run(taking:)` or `fail` takes it out, before its release is
        // counted.
        while let (held, admission) = try? await jobs.next(preparing: { item in (LockedValue<Indexed?>(item), await admit(item)) }) {
            switch admission {
            case .gone: continue
            case .cancelled:
                // Handed over before the cancellation, delivered after it: never started.
                state.withLock { $0.dispatching -= 1 }
                await fail(Self.take(held), CancellationError())
                continue
            case .admitted: break
            }
            let piece = held.withLock { self.share(of: $0!.job, within: share) }
            do {
                try await budget.acquire(piece.bytes)
            } catch {
                leave { $0.dispatching -= 1 }
                await fail(Self.take(held), error)
                continue
            }
            state.withLock { state in
                state.dispatching -= 1
                state.running += 1
            }
            let step = await run(taking: held, piece, on: executor)
            budget.release(piece.bytes)
            // A sealed file counts as running until its batch holds it, so a file waiting for
            // descriptors never finds it in neither.
            if case .sealed(let entry) = step { await batch.append(entry) }
            leave { state in
                state.running -= 1
                state.releases += 1
            }
        }
    }

    /// Ends an admitted file with `change`, under one lock, and lets the durable file waiting
    /// for room try again.
    private func leave(_ change: (inout State) -> Void) {
        state.withLock { state in
            change(&state)
            return state.leave()
        }?.resume()
    }

    /// What became of a job a slot took.
    enum Admission {
        /// Failed or completed meanwhile (no longer in `waiting`): nothing to do.
        case gone
        /// The engine was cancelled: the job is to fail, never started.
        case cancelled
        /// Counted in flight (and in `dispatching` until it runs or fails).
        case admitted
    }

    /// Takes `item` from `waiting` into `dispatching` and, unless the engine was cancelled,
    /// counts it in flight (``admit(durable:)``).
    private func admit(_ item: Indexed) async -> Admission {
        let (taken, cancelled) = state.withLock { state in
            let taken = state.waiting.removeValue(forKey: item.index) != nil
            if taken { state.dispatching += 1 }
            return (taken, state.isCancelled)
        }
        guard taken else { return .gone }
        if cancelled { return .cancelled }
        await admit(durable: writesDurableFile(item.job))
        return .admitted
    }

    /// The job `held` holds, taken out of it.
    static func take(_ held: LockedValue<Indexed?>) -> Indexed {
        held.withLock { item in
            defer { item = nil }
            return item!
        }
    }

    /// Counts a file in flight, once a durable one fits within ``durableWidth`` (a durable file
    /// may hold a directory to sync); other files always fit, one per slot.
    func admit(durable: Bool) async {
        while true {
            let fits = state.withLock { state in
                let fits = !durable || state.inFlight < durableWidth
                if fits { state.inFlight += 1 }
                return fits
            }
            if fits { return }
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                // A file that ended meanwhile: try again at once.
                let waits = state.withLock { state in
                    guard state.inFlight >= durableWidth else { return false }
                    precondition(state.admissionWaiter == nil, "two slots admitting at once")
                    state.admissionWaiter = waiter
                    return true
                }
                if !waits { waiter.resume() }
            }
        }
    }
}
