extension PushBuffer {
    /// Owns the lock around the ``StateMachine`` and performs every side effect it decides.
    ///
    /// Each operation decides inside `machine.withLock` and acts after it returns: no
    /// continuation is resumed, no callback or cancellation hook runs, while a lock is held.
    /// The source's stop closure never runs on the thread that stops the stream: the gate's
    /// handler only schedules it on ``stopExecutor``, so a source that holds its own lock while it
    /// calls in (and takes that lock in its stop closure) cannot deadlock itself.
    /// With a spill policy, yields additionally hold the spill writer's lock (see
    /// ``PushBuffer/SpillWriter``) around the decision and the write, so records land in the
    /// file in the order the machine decided; the machine's lock is never held during a write.
    @usableFromInline
    final class Storage: Sendable {
        @usableFromInline typealias Machine = StateMachine<ConsumerContinuation>
        @usableFromInline typealias ConsumerContinuation = CheckedContinuation<ConsumerWake, Never>

        @usableFromInline let machine: LockedValue<Machine>
        @usableFromInline let weight: @Sendable (Element) -> Int
        /// Links "stop the source" to the source's cancellation hook, whenever it is installed.
        @usableFromInline let gate = CancellationGate()
        /// The thread the source's stop closure runs on: never one that called into the buffer.
        let stopExecutor = BlockingIOExecutor(label: "sluice.push-buffer.stop")
        /// The source's resume callback, if registered.
        @usableFromInline let resumeCallback = LockedValue<(@Sendable () -> Void)?>(nil)
        /// The spill file and its codec, with a spill policy.
        @usableFromInline let spill: Spill?

        @usableFromInline
        init(
            capacity: Int, byteBudget: Int?, highWatermark: Int?, lowWatermark: Int?,
            policy: OverflowPolicy, weight: @escaping @Sendable (Element) -> Int
        ) {
            let high = highWatermark ?? capacity
            let low = lowWatermark ?? Swift.max(1, high / 2)
            let spill: Spill?
            switch policy.kind {
            case .fail: spill = nil
            case .spill(let configuration): spill = Spill(configuration: configuration)
            }
            self.machine = LockedValue(Machine(
                capacity: capacity, byteBudget: byteBudget, highWatermark: high, lowWatermark: low,
                spills: spill != nil))
            self.weight = weight
            self.spill = spill
        }

        deinit {
            // Nothing can consume any more (an iterator keeps the storage alive): an open stream
            // stops its source.
            act(machine.withLock { $0.consumerTerminated() })
            spill?.close()
        }

        /// Installs the source's stop closure; the gate's handler schedules it on
        /// ``stopExecutor``, so it runs once, later, on that thread.
        func installStop(_ stop: @escaping @Sendable () -> Void) {
            let executor = stopExecutor
            gate.install { executor.execute(stop) }
        }

        // MARK: Producer side

        @inlinable
        func yield(_ element: Element, offset: Int64?) -> YieldResult {
            let weight = self.weight(element)
            precondition(weight >= 0, "PushBuffer weight must not be negative, got \(weight)")
            if let spill {
                return yield(element, weight: weight, offset: offset, spilling: spill)
            }
            return act(machine.withLock { $0.yield(element, weight: weight) }, element: element, offset: offset)
        }

        /// Carries out a yield decision that is not a spill.
        @inlinable
        func act(_ action: Machine.YieldAction, element: Element, offset: Int64?) -> YieldResult {
            switch action {
            case .enqueued(let demand):
                return .enqueued(demand)
            case .resumeConsumer(let consumer, let element):
                consumer.resume(returning: .element(element))
                return .enqueued(.keepGoing)
            case .reject(let stopSource):
                if stopSource { gate.cancel() }
                return .rejected(element, offset: offset)
            case .terminate:
                return .terminated(element)
            case .spill:
                preconditionFailure("a spill decision is carried out under the spill writer's lock")
            }
        }

        @inlinable
        func finish() {
            // With a spill policy, after any write in progress (so a record whose yield began
            // before the end is delivered before it).
            let action = if let spill {
                spill.writer.withLock { _ in machine.withLock { $0.finish() } }
            } else {
                machine.withLock { $0.finish() }
            }
            act(action)
        }

        @inlinable
        func fail(_ error: any Error) {
            let action = if let spill {
                spill.writer.withLock { _ in machine.withLock { $0.fail(error) } }
            } else {
                machine.withLock { $0.fail(error) }
            }
            act(action)
        }

        @usableFromInline
        func act(_ action: Machine.FinishAction) {
            if case .resumeConsumer(let consumer, let wake) = action {
                consumer.resume(returning: wake)
            }
        }

        func setResumeCallback(_ callback: @escaping @Sendable () -> Void) {
            resumeCallback.withLock { $0 = callback }
        }

        // MARK: Consumer side

        @inlinable
        func makeIterator() {
            switch machine.withLock({ $0.makeIterator() }) {
            case .makeIterator:
                return
            case .failSecondIterator:
                preconditionFailure("PushBuffer supports a single consumer: makeAsyncIterator() called twice")
            }
        }

        @inlinable
        func next() async throws -> Element? {
            if Task.isCancelled {
                consumerTerminated()
                throw CancellationError()
            }
            var action = machine.withLock { $0.next() }
            while true {
                switch action {
                case .returnElement(let element, let resume):
                    if let resume { runResumeCallback(decidedAt: resume) }
                    return element
                case .readSpill(let read):
                    action = await readBack(read)
                case .returnNil:
                    spill?.close()
                    return nil
                case .throwError(let error):
                    spill?.close()
                    throw error
                case .throwCancellation:
                    spill?.close()
                    throw CancellationError()
                case .suspend(let id):
                    switch await suspendConsumer(id: id) {
                    case .element(let element):
                        return element
                    case .end:
                        spill?.close()
                        return nil
                    case .failure(let error):
                        spill?.close()
                        throw error
                    case .retry:
                        action = machine.withLock { $0.next() }
                    }
                }
            }
        }

        @inlinable
        func suspendConsumer(id: Int) async -> ConsumerWake {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: ConsumerContinuation) in
                    switch machine.withLock({ $0.consumerSuspended(id: id, consumer: continuation) }) {
                    case .wait:
                        break
                    case .resumeConsumer(let consumer, let wake):
                        consumer.resume(returning: wake)
                    }
                }
            } onCancel: {
                act(machine.withLock { $0.consumerCancelled(id: id) })
            }
        }

        /// The consumer's iterator is gone, or its task was cancelled: stop the source. The
        /// resume callback can never run again, so it is released: one that captures the buffer
        /// (the usual way to yield from it) would otherwise keep the buffer alive for ever.
        @usableFromInline
        func consumerTerminated() {
            act(machine.withLock { $0.consumerTerminated() })
            spill?.close()
            _ = resumeCallback.withLock { $0.take() }
        }

        @usableFromInline
        func act(_ action: Machine.TerminateAction) {
            switch action {
            case .none:
                break
            case .terminate(let consumer, let stopSource):
                consumer?.resume(returning: .failure(CancellationError()))
                if stopSource { gate.cancel() }
            }
        }

        /// Runs the resume callback, unless a pause answered since `decidedAt` overtook it.
        @usableFromInline
        func runResumeCallback(decidedAt pauseCount: Int) {
            guard machine.withLock({ $0.isResumeCurrent(pauseCount) }) else { return }
            let callback = resumeCallback.withLock { $0 }
            callback?()
        }

        @inlinable
        var statistics: Statistics {
            machine.withLock { $0.statistics }
        }
    }

    /// Ends the stream for the producers when the consumer's iterator (and every copy) is gone.
    @usableFromInline
    final class ConsumerLifetime: Sendable {
        @usableFromInline let storage: Storage

        @inlinable
        init(storage: Storage) {
            self.storage = storage
        }

        deinit {
            storage.consumerTerminated()
        }
    }
}
