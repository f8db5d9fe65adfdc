extension PushBuffer {
    /// Owns the lock around the ``StateMachine`` and performs every side effect it decides: the
    /// consumer's side comes from ``ChannelStorage``, the source's side is here.
    ///
    /// No continuation is resumed, and no callback or cancellation hook runs, while a lock is
    /// held. The source's stop closure never runs on the thread that stops the stream: the gate's
    /// handler only schedules it on ``stopExecutor``, so a source that holds its own lock while it
    /// calls in (and takes that lock in its stop closure) cannot deadlock itself. With a spill
    /// policy, yields additionally hold the spill writer's lock (see ``PushBuffer/Spill``) around
    /// the decision and the write, so records land in the store in the order the machine decided;
    /// the machine's lock is never held during a write.
    @usableFromInline
    final class Storage: ChannelStorage {
        @usableFromInline typealias Machine = StateMachine<CheckedContinuation<ConsumerWake<Element>, Never>>

        @usableFromInline let machine: LockedValue<Machine>
        @usableFromInline let weight: @Sendable (Element) -> Int
        /// Links "stop the source" to the source's cancellation hook, whenever it is installed.
        @usableFromInline let gate = CancellationGate()
        /// The thread the source's stop closure runs on: never one that called into the buffer.
        let stopExecutor = BlockingIOExecutor(label: "sluice.push-buffer.stop")
        /// The source's resume callback, if registered.
        @usableFromInline let resumeCallback = LockedValue<(@Sendable () -> Void)?>(nil)
        /// The spill store and its codec, with a spill policy.
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

        /// The source finishes or fails the stream. With a spill policy, under the spill writer's
        /// lock, after any write in progress, so a record whose yield began before the end is
        /// delivered before it.
        @inlinable
        func end(_ ending: Machine.Ending) {
            let action = if let spill {
                spill.writer.withLock { _ in machine.withLock { $0.end(ending) } }
            } else {
                machine.withLock { $0.end(ending) }
            }
            act(action)
        }

        func setResumeCallback(_ callback: @escaping @Sendable () -> Void) {
            resumeCallback.withLock { $0 = callback }
        }

        // MARK: What the consumer's side asks of the source's side

        /// Resumes or stops the source.
        @usableFromInline
        func act(_ effect: SourceEffect) {
            switch effect {
            case .none:
                break
            case .resume(let decidedAt):
                // Unless a pause answered since overtook it.
                guard machine.withLock({ $0.isResumeCurrent(decidedAt) }) else { return }
                let callback = resumeCallback.withLock { $0 }
                callback?()
            case .stop:
                gate.cancel()
            }
        }

        /// The stream ended for the consumer: the spill store's space is released.
        @usableFromInline
        func consumerReachedEnd() {
            spill?.close()
        }

        /// The consumer went away. The resume callback can never run again, so it is released:
        /// one that captures the buffer (the usual way to yield from it) would otherwise keep the
        /// buffer alive for ever.
        @usableFromInline
        func consumerDidLeave() {
            spill?.close()
            _ = resumeCallback.withLock { $0.take() }
        }
    }
}
