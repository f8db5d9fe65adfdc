extension BoundedChannel.StateMachine {
    // Bookkeeping shared by the events: ids, room, the buffer, and answering waiting senders.

    @inlinable
    mutating func drawID() -> Int {
        defer { nextID &+= 1 }
        return nextID
    }

    /// Whether an element of `weight` bytes may enter the buffer now. An element heavier
    /// than the whole budget enters only an empty buffer.
    @inlinable
    func hasRoom(forWeight weight: Int) -> Bool {
        BufferAdmission.admits(
            weight: weight, bufferedCount: buffer.count, bufferedBytes: bufferedBytes,
            capacity: capacity, byteBudget: byteBudget)
    }

    @inlinable
    mutating func enqueue(_ element: Element, weight: Int) {
        buffer.append(Buffered(element: element, weight: weight))
        bufferedBytes += weight
        countSent(weight: weight)
        notePeak(count: buffer.count, bytes: bufferedBytes)
    }

    @inlinable
    mutating func notePeak(count: Int, bytes: Int) {
        BufferAdmission.raisePeaks(&counters.peakBufferedCount, &counters.peakBufferedBytes, count: count, bytes: bytes)
    }

    @inlinable
    mutating func countSent(weight: Int) {
        counters.elementsSent += 1
        counters.bytesSent += Int64(weight)
    }

    @inlinable
    mutating func countReceived(weight: Int) {
        counters.elementsReceived += 1
        counters.bytesReceived += Int64(weight)
    }

    /// Accounts for `item`, just popped for the consumer, and admits the waiting senders
    /// that now fit; returns the registered ones to resume.
    @inlinable
    mutating func take(_ item: Buffered) -> [Sender] {
        bufferedBytes -= item.weight
        countReceived(weight: item.weight)
        guard !waiters.isEmpty else { return [] }
        var resumptions: [SenderResumption] = []
        admitWaiters(into: &resumptions)
        return resumptions.map(\.sender)
    }

    /// Moves waiting senders' elements into the buffer, in order, while the first fits.
    @inlinable
    mutating func admitWaiters(into resumptions: inout [SenderResumption]) {
        var admitted = 0
        while admitted < waiters.count && hasRoom(forWeight: waiters[admitted].weight) {
            enqueue(waiters[admitted].element, weight: waiters[admitted].weight)
            settle(id: waiters[admitted].id, .success(()), into: &resumptions)
            admitted += 1
        }
        waiters.removeFirst(admitted)
    }

    /// Answers the sender `id`: now if it registered, at registration otherwise.
    @inlinable
    mutating func settle(id: Int, _ result: SendResult, into resumptions: inout [SenderResumption]) {
        if let sender = senderContinuations.removeValue(forKey: id) {
            resumptions.append(SenderResumption(sender: sender, result: result))
        } else {
            earlyResults[id] = result
        }
    }

    /// Fails every waiting sender with `reason`, handing its element back.
    @inlinable
    mutating func releaseWaiters(_ reason: SendFailure.Reason) -> [SenderResumption] {
        var resumptions: [SenderResumption] = []
        for waiter in waiters {
            settle(id: waiter.id, .failure(SendFailure(reason: reason, element: waiter.element)), into: &resumptions)
        }
        waiters.removeAll()
        return resumptions
    }

    @inlinable
    mutating func end(_ ended: State, result: ConsumerResult) -> FinishAction {
        guard case .open = state else { return .none }
        state = ended
        let senders = releaseWaiters(.finished)
        var resumedConsumer: (Consumer, ConsumerResult)?
        if case .waiting(_, let handle) = consumer {
            consumer = .idle
            resumedConsumer = (handle, result)
        }
        if resumedConsumer == nil && senders.isEmpty { return .none }
        return .resume(consumer: resumedConsumer, senders: senders)
    }

    @inlinable
    mutating func terminate(consumer handle: Consumer?) -> TerminateAction {
        switch state {
        case .terminated:
            return handle.map { .resume(consumer: $0, senders: []) } ?? .none
        case .open:
            state = .terminated(.consumerTerminated)
        case .finished, .failed:
            state = .terminated(.finished)
        }
        counters.elementsDiscarded += buffer.count
        counters.bytesDiscarded += Int64(bufferedBytes)
        buffer.removeAll()
        bufferedBytes = 0
        let senders = releaseWaiters(.consumerTerminated)
        if handle == nil && senders.isEmpty { return .none }
        return .resume(consumer: handle, senders: senders)
    }
}

extension BoundedChannel.StateMachine {
    /// Stops the program if an invariant does not hold (debug builds only; O(1)).
    @inlinable
    func checkInvariants() {
        assert(bufferedBytes >= 0, "negative buffered bytes")
        assert(buffer.count <= capacity, "BoundedChannel holds \(buffer.count) of \(capacity) elements")
        assert(
            byteBudget.map { bufferedBytes <= $0 || buffer.count == 1 } ?? true,
            "BoundedChannel holds \(bufferedBytes) bytes past its budget")
        assert(waiters.isEmpty || (isOpen && !buffer.isEmpty), "a sender waits although its element would fit")
        assert(senderContinuations.count <= waiters.count, "a registered sender is not waiting")
        if case .waiting = consumer {
            assert(isOpen && buffer.isEmpty && waiters.isEmpty, "the consumer waits while there is something to take")
        }
        assert(
            counters.elementsSent == counters.elementsReceived + counters.elementsDiscarded + buffer.count
                && counters.bytesSent == counters.bytesReceived + counters.bytesDiscarded + Int64(bufferedBytes),
            "a sent element is neither received, discarded nor buffered")
        assert(counters.peakBufferedCount >= buffer.count && counters.peakBufferedBytes >= Int64(bufferedBytes))
    }

    @inlinable
    var isOpen: Bool {
        if case .open = state { true } else { false }
    }
}
