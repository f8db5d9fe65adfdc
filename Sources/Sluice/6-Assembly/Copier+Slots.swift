/// The slots of ``Copier``: each takes the next job itself when it ends a file.
extension Copier {
    /// One slot: takes jobs until ``intake`` ends (or is cancelled: what is buffered is never
    /// started), each once there is room for it (``StateMachine/admit(durable:)``, waited for
    /// before the next slot may take a job, so jobs start in order and one at most waits) and
    /// its share of the budget.
    func serve(
        _ jobs: BoundedChannel<Indexed>.SharedIterator, on executor: BlockingIOExecutor, batch: SyncBatch, share: Int
    ) async {
        // The job goes into a box at once: the slot holds it (and so its directories'
        // descriptors) only until `run(taking:)` or `fail` takes it out, before its release is
        // counted.
        while let (held, taking) = try? await jobs.next(preparing: { item in (LockedValue<Indexed?>(item), await take(item)) }) {
            switch taking {
            case .gone: continue
            case .cancelled:
                // Handed over before the cancellation, delivered after it: never started.
                await fail(held.take(leaving: nil)!, CancellationError())
                continue
            case .taken: break
            }
            let piece = held.withLock { self.share(of: $0!.job, within: share) }
            do {
                try await budget.acquire(piece.bytes)
            } catch {
                state.withLock { $0.drop(admitted: true) }?.resume()
                await fail(held.take(leaving: nil)!, error)
                continue
            }
            state.withLock { $0.start() }
            let sealed = await run(taking: held, piece, on: executor)
            budget.release(piece.bytes)
            // A sealed file counts as running until its batch holds it, so a file waiting for
            // descriptors never finds it in neither.
            if let sealed {
                await batch.append(sealed)
                observer?(.sealedIntoBatch)
            }
            let ending = state.withLock { $0.end(sealed: sealed != nil) }
            ending.waiter?.resume()
            if ending.commitsBatch { batch.commitNow() }
        }
    }

    /// Takes `item` from the jobs waiting and, unless the engine was cancelled, counts it in
    /// flight once it fits (``StateMachine/admit(durable:)``).
    private func take(_ item: Indexed) async -> Machine.Taking {
        let taking = state.withLock { $0.take(item.index) }
        guard case .taken = taking else { return taking }
        let durable = writesDurableFile(item.job)
        while !state.withLock({ $0.admit(durable: durable) }) {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                // A file that ended meanwhile: try again at once.
                if !state.withLock({ $0.wait(waiter, durable: durable) }) { waiter.resume() }
            }
        }
        return taking
    }

}

extension LockedValue where Value: Sendable {
    /// The value, replaced by `empty`: what a box hands over once, so that it holds it no longer.
    func take(leaving empty: Value) -> Value {
        withLock { value in
            defer { value = empty }
            return value
        }
    }
}
