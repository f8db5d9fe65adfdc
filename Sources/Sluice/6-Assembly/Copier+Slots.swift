/// The slots of ``Copier``: each takes the next job itself when it ends a file.
extension Copier {
    /// One slot: takes jobs until ``intake`` ends (or is cancelled: what is buffered is never
    /// started), each once there is room for it (a durable file only while fewer than
    /// ``durableWidth`` files are in flight) and its share of the budget.
    func serve(
        _ jobs: BoundedChannel<Indexed>.SharedIterator, on executor: BlockingIOExecutor, batch: SyncBatch, share: Int
    ) async {
        while let item = try? await jobs.next() {
            let (taken, cancelled) = state.withLock { state in
                let taken = state.waiting.removeValue(forKey: item.index) != nil
                if taken { state.dispatching += 1 }
                return (taken, state.isCancelled)
            }
            guard taken else { continue }
            // Handed over before the cancellation, delivered after it: never started.
            if cancelled {
                state.withLock { $0.dispatching -= 1 }
                await fail(item, CancellationError())
                continue
            }
            await admit(durable: writesDurableFile(item.job))
            let piece = self.share(of: item.job, within: share)
            do {
                try await budget.acquire(piece.bytes)
            } catch {
                let waiters = state.withLock { state in
                    state.dispatching -= 1
                    return state.leave()
                }
                for waiter in waiters { waiter.resume() }
                await fail(item, error)
                continue
            }
            state.withLock { state in
                state.dispatching -= 1
                state.running += 1
            }
            // The slot holds the job (and so its directories' descriptors) only while it runs:
            // a release is counted once they are closed.
            let step = await run(taking: LockedValue<Indexed?>(item), piece, on: executor)
            budget.release(piece.bytes)
            // A sealed file counts as running until its batch holds it, so a file waiting for
            // descriptors never finds it in neither.
            if case .sealed(let entry) = step { await batch.append(entry) }
            let waiters = state.withLock { state in
                state.running -= 1
                state.releases += 1
                return state.leave()
            }
            for waiter in waiters { waiter.resume() }
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
                    if state.inFlight >= durableWidth { state.admissionWaiters.append(waiter) }
                    return state.inFlight >= durableWidth
                }
                if !waits { waiter.resume() }
            }
        }
    }
}
