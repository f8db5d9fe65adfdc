/// `sluice follow`'s consumer: writes each chunk of a ``FollowedFile`` to a sink, raw or
/// gzip-compressed, and at each durable point makes what it wrote durable, then records where
/// the follower stood, then acknowledges it (<doc:ExactlyOnce>).
///
/// A durable point comes once ``Options/syncInterval`` has passed since the last one and
/// something was written since: after a chunk; with nothing left to read, a twentieth of the
/// interval after the follower caught up (``FollowedFile/AsyncIterator/next(caughtUpAfter:)``);
/// and at the end. With compression it ends the gzip member being written (RFC 1952: a gzip
/// file is a series of members), so the destination is a valid gzip file at every durable
/// point; nothing is written at a durable point with nothing read. Its order: the member's end, `fsync(2)` of the
/// destination (unless ``Options/synchronizes`` is off), the state replaced (``FollowStateFile``:
/// temporary, `fsync`, rename, directory `fsync`), then ``FollowedFile/acknowledge(_:)``. A
/// crash anywhere leaves a state that is never ahead of the durable destination.
///
/// Concurrency contract: the loop runs in a task of its own that prefers the follower's thread,
/// so a chunk is read, compressed (the blocks on the encoder's workers) and written without a
/// hand-off; cancelling the caller stops the follower (``FollowedFile/stop()``) rather than the
/// loop, which then makes its last durable point.
package enum FollowShipment {
    package struct Options: Sendable {
        /// The most time between a write and the durable point that covers it (default 1 s).
        package var syncInterval: Duration = .seconds(1)
        /// Whether a durable point `fsync`s the destination (`--no-fsync`: only the state is
        /// replaced, a promise that holds through a crash of the process, not of the machine).
        package var synchronizes = true
        /// gzip, a member per durable point: the level and the threads (as `compress -p`).
        package var compression: (level: CompressionLevel, threadCount: Int)?

        package init() {}
    }

    /// Ships `followed` to `sink` (which is `file` when a file) until the followed file ends
    /// (idle, or the calling task cancelled), then makes a last durable point, recording
    /// `state` (its checkpoint and length replaced at each durable point) in `stateFile`.
    ///
    /// - Throws: what the follower, the encoder, the sink or the state file throws; what was
    ///   written since the last durable point stays unacknowledged (read again on resume).
    package static func ship(
        _ followed: FollowedFile, to sink: any ChunkSink, file: AppendingFileSink?, options: Options,
        stateFile: FollowStateFile?, state: FollowState?
    ) async throws {
        let task = Task(executorPreference: followed.preferredExecutor) {
            try await Run(
                followed, to: sink, file: file, options: options, stateFile: stateFile, state: state
            ).run()
        }
        try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            followed.stop()
        }
    }
}

extension FollowShipment {
    /// One shipment's loop and what it has written since its last durable point.
    private final class Run {
        private let followed: FollowedFile
        private let sink: any ChunkSink
        /// The destination file (`nil`: standard output, whose length is not recorded).
        private let file: AppendingFileSink?
        private let options: Options
        private let stateFile: FollowStateFile?
        private let state: FollowState?
        /// The last chunk written and not yet covered by a durable point.
        private var pending: FollowedChunk?
        private var encoder: ParallelGzipEncoder?
        private var lastDurablePoint = ContinuousClock.now

        init(
            _ followed: FollowedFile, to sink: any ChunkSink, file: AppendingFileSink?, options: Options,
            stateFile: FollowStateFile?, state: FollowState?
        ) {
            self.followed = followed
            self.sink = sink
            self.file = file
            self.options = options
            self.stateFile = stateFile
            self.state = state
        }

        /// Ships until the followed file ends, then makes a last durable point.
        func run() async throws {
            var iterator = followed.makeAsyncIterator()
            while true {
                let delivery: FollowedFile.Delivery?
                if pending == nil {
                    delivery = try await iterator.next().map { .chunk($0) }
                } else {
                    // Caught up: durable soon (a backlog shipped is then durable as soon as a copy
                    // would be), but at most twenty times an interval for a writer that appends a
                    // line at a time.
                    let due = max(.zero, lastDurablePoint + options.syncInterval - .now)
                    delivery = try await iterator.next(caughtUpAfter: min(due, options.syncInterval / 20))
                }
                switch delivery {
                case nil:
                    try await makeDurablePoint()
                    return
                case .caughtUp:
                    try await makeDurablePoint()
                case .chunk(let piece):
                    try await write(piece)
                }
            }
        }

        private func write(_ piece: FollowedChunk) async throws {
            if let compression = options.compression {
                if encoder == nil {
                    encoder = ParallelGzipEncoder(
                        level: compression.level, threadCount: compression.threadCount,
                        blockSize: ParallelGzipEncoder.defaultBlockSize,
                        outputChunkSize: 1 << 20, maximumBlocksInFlight: nil,
                        indexing: .accessPoints(inputSize: nil, reservesIndex: false))
                }
                try await encoder!.process(piece.chunk) { try await sink.write($0) }
            } else {
                try await sink.write(piece.chunk)
            }
            pending = piece
            if ContinuousClock.now - lastDurablePoint >= options.syncInterval {
                try await makeDurablePoint()
            }
        }

        /// Ends the member, makes the destination durable, records the state, acknowledges.
        private func makeDurablePoint() async throws {
            guard let piece = pending else { return }
            if let encoder {
                self.encoder = nil
                _ = try await encoder.finish { try await sink.write($0) }
            }
            if options.synchronizes { try await sink.commit() }
            if let stateFile, var state {
                state.checkpoint = piece.checkpoint
                if let file, state.destination != nil { state.destination!.length = await file.length }
                try stateFile.store(state)
            }
            followed.acknowledge(piece)
            pending = nil
            lastDurablePoint = .now
        }
    }
}
