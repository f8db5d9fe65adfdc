extension PushBuffer.StateMachine {
    // Bookkeeping shared by the events: room, the buffer and its peaks, demand, the end.

    /// Whether an element of `weight` bytes may enter the memory buffer now.
    @inlinable
    func hasRoom(forWeight weight: Int) -> Bool {
        BufferAdmission.admits(
            weight: weight, bufferedCount: buffer.count, bufferedBytes: bufferedBytes,
            capacity: capacity, byteBudget: byteBudget)
    }

    /// Elements buffered in memory and in the spill file.
    @inlinable
    var level: Int { buffer.count + spill.records }

    /// Puts `item` at the end of the memory buffer and updates the peaks.
    @inlinable
    mutating func store(_ item: Buffered) {
        buffer.append(item)
        bufferedBytes += item.weight
        notePeak(count: buffer.count, bytes: bufferedBytes)
    }

    @inlinable
    mutating func notePeak(count: Int, bytes: Int) {
        BufferAdmission.raisePeaks(&counters.peakBufferedCount, &counters.peakBufferedBytes, count: count, bytes: bytes)
    }

    /// After an element arrived: pause from the crossing of the high watermark on.
    @inlinable
    mutating func raiseDemand() -> PushBuffer<Element>.Demand {
        if !isPaused && level >= highWatermark {
            isPaused = true
            pauseCount &+= 1
        }
        return isPaused ? .pause : .keepGoing
    }

    /// After an element left: if this crossed below the low watermark while paused and the
    /// stream is open, the pause count the resume belongs to.
    @inlinable
    mutating func lowerDemand() -> Int? {
        guard isPaused, level < lowWatermark else { return nil }
        isPaused = false
        if case .open = state { return pauseCount }
        return nil
    }

    @inlinable
    func overflowError(spillLimit: Int64?) -> CapacityExceededError {
        CapacityExceededError(
            capacity: capacity, bufferedCount: level,
            bufferedBytes: Int64(bufferedBytes) + spill.bytes, spillLimit: spillLimit)
    }

    @inlinable
    mutating func end(_ newState: State, wake: PushBuffer<Element>.ConsumerWake) -> FinishAction {
        guard case .open = state else { return .none }
        state = newState
        if case .waiting(_, let waitingConsumer) = consumer {
            consumer = .idle
            return .resumeConsumer(waitingConsumer, wake)
        }
        return .none
    }

    @inlinable
    mutating func terminate(consumer handle: Consumer?) -> TerminateAction {
        let stopSource: Bool
        switch state {
        case .terminated:
            return handle.map { .terminate(consumer: $0, stopSource: false) } ?? .none
        case .open:
            stopSource = true
        case .finished, .failed, .overflowed:
            stopSource = false
        }
        state = .terminated
        counters.discardedCount += buffer.count + spill.records
        buffer.removeAll()
        bufferedBytes = 0
        spill.records = 0
        spill.bytes = 0
        return .terminate(consumer: handle, stopSource: stopSource)
    }
}

extension PushBuffer.StateMachine {
    /// Stops the program if an invariant does not hold (debug builds only; O(1)).
    @inlinable
    func checkInvariants() {
        assert(bufferedBytes >= 0 && spill.records >= 0 && spill.bytes >= 0, "negative count")
        assert(buffer.count <= capacity, "PushBuffer holds \(buffer.count) of \(capacity) elements")
        assert(
            byteBudget.map { bufferedBytes <= $0 || buffer.count == 1 } ?? true,
            "PushBuffer holds \(bufferedBytes) bytes past its budget")
        assert(spills || !spill.isActive, "a spill without a spill policy")
        assert(buffer.isEmpty || !spill.isReading, "a read-back into a non-empty buffer")
        assert(
            counters.acceptedCount
                == counters.deliveredCount + counters.discardedCount + buffer.count + spill.records,
            "an accepted element is neither delivered, discarded nor buffered")
        assert(counters.peakBufferedCount >= buffer.count && counters.peakBufferedBytes >= Int64(bufferedBytes))
        switch consumer {
        case .idle:
            break
        case .pending:
            assert(!spill.isReading, "a read-back while the consumer suspends")
        case .waiting:
            assert(
                isOpen && buffer.isEmpty && spill.records == 0 && !spill.isReading,
                "a consumer waits while there is something to take")
        }
    }

    @inlinable
    var isOpen: Bool {
        if case .open = state { true } else { false }
    }
}
