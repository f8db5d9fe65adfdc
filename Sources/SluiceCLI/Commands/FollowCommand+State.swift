#if canImport(Glibc)
import Glibc
#endif
import Sluice

extension FollowCommand {
    /// A command line that cannot be taken up with the state it names.
    struct StateMismatch: Error, CustomStringConvertible {
        var description: String
    }

    /// What a run takes up: its state file, locked, and the state recorded there (`--state`),
    /// checked against the command line and the destination before anything is read or written.
    struct Resumption {
        var stateFile: FollowStateFile?
        /// The state recorded at the last durable point; `nil` for a first run.
        var state: FollowState?
        /// The destination, never read as a generation of the followed file.
        var excluded: Set<FileIdentity> = []
        /// Whether an existing destination is written on: `--append`, a resumed state, or an
        /// empty destination beside a state with no record yet (a first run that stopped before
        /// its first record left both).
        var appends = false

        /// Locks the state file (creating it empty) and checks what it records: the same file,
        /// the same kind of output, and a destination that is the recorded one and holds at
        /// least the recorded length; without a state, an existing destination needs `--append`.
        ///
        /// - Throws: ``FileError`` (the state file, a destination refused), or ``StateMismatch``.
        static func take(_ request: Request) throws -> Resumption {
            var resumption = Resumption()
            if let path = request.statePath {
                let others = [request.file, request.output].compactMap { $0 }
                let identity = try? FileStatus.of(path).identity
                let sameFile = others.first { $0 == path || (identity != nil && (try? FileStatus.of($0).identity) == identity) }
                if let sameFile { throw StateMismatch(description: "--state '\(path)' is '\(sameFile)': give the state a file of its own") }
                // Not excluded by its inode: each record is a new file, and the number of the one
                // it replaces is free for a new log file (a state's name is no rotation's).
                let (file, state) = try FollowStateFile.lock(path)
                resumption = Resumption(stateFile: file, state: state)
            }
            do {
                try resumption.check(request)
            } catch {
                resumption.stateFile?.removeIfNeverStored()
                throw error
            }
            return resumption
        }

        /// Checks the destination against the state, and decides whether it is appended to.
        private mutating func check(_ request: Request) throws {
            let existing = try? request.output.map { try FileStatus.of($0) }
            if let existing { excluded.insert(existing.identity) }
            guard let state else {
                appends = request.appending || (stateFile != nil && existing?.size == 0)
                if let output = request.output, existing != nil, !appends {
                    throw FileError(code: .alreadyExists, operation: .open, path: output, reason: "it exists (use --append to append to it)")
                }
                return
            }
            try Self.check(state, request: request, existing: existing)
            appends = true
        }

        private static func check(_ state: FollowState, request: Request, existing: FileStatus?) throws {
            let statePath = request.statePath!
            func mismatch(_ text: String) -> StateMismatch { StateMismatch(description: "the state '\(statePath)' \(text)") }
            let followed = absolute(request.file)
            guard state.followed == followed else { throw mismatch("follows '\(state.followed)', not '\(followed)'") }
            guard state.isCompressed == (request.shipment.compression != nil) else {
                throw mismatch(state.isCompressed ? "was written with -z: add it" : "was written without -z")
            }
            switch (state.destination, request.output) {
            case (nil, nil): break
            case (nil, _?): throw mismatch("was written to standard output: use -c")
            case (_?, nil): throw mismatch("was written to a file: give it with -o")
            case (let recorded?, let output?):
                guard let existing, existing.identity == recorded.identity else {
                    let now = existing == nil ? "is missing" : "is another file now"
                    let named = recorded.path == output ? "'\(output)', which \(now)" : "'\(recorded.path)', not '\(output)'"
                    throw mismatch("was written to \(named): nothing can be resumed into it")
                }
                guard existing.size >= recorded.length else {
                    throw mismatch("records \(recorded.length) bytes of '\(output)', which holds \(existing.size): it was cut")
                }
            }
        }

        /// Opens the destination on `executor` (the follower's thread); resuming, cuts it back
        /// to the recorded length; on a first run with a state, records the starting point.
        ///
        /// - Returns: the sink, the file when it is one, and the state to record at each durable point.
        /// - Throws: ``FileError`` of the open, the cut back or the first record.
        func openDestination(
            _ request: Request, followed: FollowedFile, executor: BlockingIOExecutor
        ) async throws(FileError) -> (sink: any ChunkSink, file: AppendingFileSink?, state: FollowState?) {
            let isCompressed = request.shipment.compression != nil
            guard let output = request.output else {
                let state = FollowState(followed: Self.absolute(request.file), destination: nil, isCompressed: isCompressed, checkpoint: followed.checkpoint)
                if self.state == nil { try stateFile?.store(state) }
                return (DescriptorSink(), nil, stateFile == nil ? nil : state)
            }
            let file = try AppendingFileSink.open(output, appending: appends, executor: executor)
            followed.exclude(file.identity)  // never its own output, when beside the followed file
            if let recorded = self.state?.destination {
                guard file.identity == recorded.identity else {  // replaced since it was checked
                    throw FileError(code: .unsupported, operation: .open, path: output, reason: "it is not the file the state records")
                }
                try await file.cutBack(to: recorded.length)
            } else if stateFile != nil, request.shipment.synchronizes {
                // The first record never names a file, or bytes of it, that a crash can take back.
                try await file.commit()
                try Descriptor.synchronizeDirectory(output.directory)
            }
            guard let stateFile else { return (file, file, nil) }
            let state = FollowState(
                followed: Self.absolute(request.file), destination: .init(path: output, identity: file.identity, length: await file.length),
                isCompressed: isCompressed, checkpoint: followed.checkpoint)
            if self.state == nil { try stateFile.store(state) }
            return (file, file, state)
        }

        /// `path` from the root: the state names the followed file wherever the command runs.
        static func absolute(_ path: Pathname) -> Pathname {
            guard path.bytes.first != UInt8(ascii: "/"), let directory = getcwd(nil, 0) else { return path }
            defer { free(directory) }
            return Pathname(cString: directory).appending(path)
        }
    }
}
