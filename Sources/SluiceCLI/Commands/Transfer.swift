#if canImport(Glibc)
import Glibc
#endif
import Sluice

/// One source to one destination through the Sluice pipeline: what `copy`, `compress` and
/// `decompress` each run per operand.
struct Transfer: Sendable {
    enum Source: Equatable {
        case standardInput
        case file(Pathname)

        /// The source an operand names: `-` is standard input.
        init(operand: Pathname) {
            self = operand == "-" ? .standardInput : .file(operand)
        }

        var name: Pathname {
            switch self {
            case .standardInput: return "-"
            case .file(let path): return path
            }
        }
    }

    enum Destination: Equatable {
        /// A descriptor the process inherited, written in place: standard output (`-`), or the
        /// descriptor a destination such as `/dev/stderr` or `/dev/fd/3` names
        /// (``Pathname/inheritedDescriptor``); `name` is what messages say.
        case descriptor(CInt, name: Pathname)
        case file(Pathname)
        /// `--test`: decode and verify, write nothing.
        case discard

        /// Standard output, `-`.
        static let standardOutput = Destination.descriptor(1, name: "-")

        /// A destination path: the descriptor it names, if it names one the process inherited
        /// (`/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, a link to one), else the file.
        init(path: Pathname) {
            if path == "-" {
                self = .standardOutput
            } else if let number = path.inheritedDescriptor {
                self = number == 1 ? .standardOutput : .descriptor(number, name: path)
            } else {
                self = .file(path)
            }
        }
    }

    var source: Source
    var destination: Destination
    /// The verb of messages: `copy`, `compress`, `decompress`, `test`.
    var verb: String
    var transform: TransformFactory?
    /// The warnings ``transform`` met, recorded as they are met: printed before a failure,
    /// which gives no report to carry them (a segment that did not match its index, then a
    /// trailer that fails its check); `nil` without a transform.
    var transformWarnings: LockedValue<[StageWarning]>? = nil
    /// `--rm`: remove the source once the destination is committed (durably).
    var removesSource = false
    /// Whether a file destination takes the source's modification time, as `gzip` gives it
    /// (compress and decompress); `--preserve` gives it in any case.
    var keepsModificationTime = false
    /// The files this run has created, shared by its operands: a later operand never
    /// overwrites one (as `cp`).
    var created: CreatedFiles
    /// The threads that compress, for the `--verbose` report of `compress`; `nil` otherwise.
    var compressionThreads: Int? = nil
    /// `decompress --range`: the bytes of the source's output to write, and the threads that
    /// decode its segments; the source is then read at random (``GzipRangeChunks``), not
    /// through ``transform``.
    var range: RangeRead? = nil
    /// The system calls of the transfer's files (the seam through which tests corrupt writes).
    var system = SystemCalls.live

    struct RangeRead {
        var bytes: Range<Int64>
        var threadCount: Int
    }

    /// What happened, for the exit status.
    enum Outcome {
        case success(warnings: [StageWarning])
        /// Failed, with the message printed, if any.
        case failure(message: String?)
        case brokenPipe
        case cancelled
    }

    /// Runs the transfer and reports on standard error: its warnings, its report with
    /// `--verbose`, or its failure (``fail(_:display:file:options:)``, the one place a failure is
    /// printed).
    ///
    /// - Parameter operation: the progress of the command this transfer is one file of
    ///   (several operands): the transfer reports to it, as a file of an engine does, and
    ///   draws no progress of its own; `nil`: the transfer's own progress is drawn.
    func run(options: CommonOptions, in operation: ManyFilesProgress? = nil) async -> Outcome {
        let file = operation.map { OperationFile(progress: $0, index: $0.reserveIndex(), source: source) }
        var job: Copier.Job
        let rangeChunks: GzipRangeChunks?
        do {
            (job, rangeChunks) = try await self.job(options: options)
        } catch {
            return await fail(error, display: nil, file: file, options: options)
        }
        // Drawn from the copy's own progress once the source and the destination are open: a
        // transfer that fails to open them draws nothing (``fail(_:display:file:options:)``).
        let started = LockedValue<(display: ProgressDisplay?, forwarding: Task<Void, Never>?)>((nil, nil))
        let (mode, label) = (options.progress, "\(verb) '\(source.name)'")
        // Standard output, a descriptor, a device or a FIFO: what is written is out, committed or not.
        let inPlace = switch destination {
        case .descriptor: true
        case .file(let path): (try? FileStatus.of(path)).map { $0.kind != .regular } ?? false
        case .discard: false
        }
        job.onCopyStart = { hub in
            let display = file == nil ? ProgressDisplay(hub: hub, mode: mode, label: label, writesInPlace: inPlace) : nil
            let forwarding = file?.forward(hub)
            started.withLock { $0 = (display, forwarding) }
        }
        let copier = Copier(options: copierOptions(options), progress: ManyFilesProgress(), ownsProgress: true, system: system)
        let result: Result<Copier.Committed, any Error>
        do { result = .success(try await copier.copy(job)) } catch { result = .failure(error) }
        let totals = await copier.finish()
        let (display, forwarding) = started.withLock { $0 }
        forwarding?.cancel()
        switch result {
        case .failure(let error):
            let warnings = rangeChunks?.warnings ?? transformWarnings?.withLock { $0 } ?? []
            return await fail(error, display: display, file: file, options: options, warnings: warnings)
        case .success(let committed):
            await display?.finish(.completed)
            file?.finish(bytes: committed.report.bytesRead, written: committed.report.bytesWritten, error: nil, options: options)
            let warnings = rangeChunks?.warnings ?? []
            return await succeed(committed, warnings: warnings, unsynced: totals.unsyncedDirectories, options: options)
        }
    }

    /// The copier of a transfer run alone: the command's options for one file at a time, its
    /// data synced by its own `fsync(2)` (no batch to wait for), its reads and writes on
    /// threads of their own (overlapping), the CRC-32 for `--verbose` and
    /// for a transform (which computes it anyway), and a budget that holds every channel of an
    /// explicit `--capacity`.
    private func copierOptions(_ options: CommonOptions) -> Copier.Options {
        var copier = options.copierOptions(keepsModificationTime: keepsModificationTime)
        copier.width = 1
        copier.batchesSyncs = false
        copier.overlapsReadsAndWrites = true
        copier.copy.pipeline.computesCRC32 = options.verbose || transform != nil
        copier.byteBudget = max(copier.byteBudget, 2 * options.capacity * options.chunkSize)
        return copier
    }

    /// The copier's job: ``source`` to ``destination``, refused first when the destination is
    /// a file this run created, or standard output appended to the source itself; for
    /// ``range``, the source opened for it too (`-v` says when it has no index to start from).
    ///
    /// - Throws: ``FileError``: `alreadyExists` (a file this run created), `sameFile`; what
    ///   opening a range's source throws.
    private func job(options: CommonOptions) async throws -> (Copier.Job, GzipRangeChunks?) {
        let input: Copier.Job.Source
        var rangeChunks: GzipRangeChunks?
        switch source {
        case .standardInput: input = .descriptor(.standardInput, name: "-")
        case .file(let path) where range != nil:
            let chunks = try await GzipRangeChunks.open(
                path, range: range!.bytes, chunkSize: options.chunkSize, threadCount: range!.threadCount)
            if options.verbose && !chunks.isIndexed {
                Console.message("\(verb) '\(path)': no index to start the range from: decoding from the start")
            }
            (input, rangeChunks) = (.chunks(chunks, name: path), chunks)
        case .file(let path): input = .file(path)
        }
        let output: Copier.Job.Destination
        // The source's identity, looked up only where a destination is compared with it.
        func read() -> FileStatus? {
            if case .file(let path) = source { try? FileStatus.of(path) } else { try? Descriptor.standardInput.status() }
        }
        switch destination {
        case .descriptor(let number, let name):
            // `sluice copy f - >> f` would read its own output until the disk is full.
            let descriptor = Descriptor(rawValue: number)
            if let written = try? descriptor.status(), written.kind == .regular, let read = read(), written.isSameFile(as: read) {
                throw FileError.sameFile(destination: name)
            }
            output = .sink(DescriptorSink(descriptor, path: name), name: name)
        case .discard:
            output = .sink(DiscardingSink(), name: "-")
        case .file(let path):
            if let refusal = createdFileRefusal(path) { throw refusal }
            // A range's source reaches the copier as chunks: compared here (`--range … -o in.gz in.gz`).
            if rangeChunks != nil, let written = try? FileStatus.of(path), let read = read(), written.isSameFile(as: read) {
                throw FileError.sameFile(destination: path)
            }
            output = .file(path)
        }
        return (Copier.Job(from: input, to: output, transform: rangeChunks == nil ? transform : nil), rangeChunks)
    }

    /// A transfer run alone as one file of a command's progress (``run(options:in:)``).
    private struct OperationFile {
        var progress: ManyFilesProgress
        var index: Int
        var source: Source

        /// Starts the file in the operation and forwards `hub`'s snapshots to it; subscribed
        /// before the copy runs, so nothing is missed. The task ends with the hub.
        func forward(_ hub: ProgressHub) -> Task<Void, Never> {
            progress.started(index: index, file: source.name)
            let (updates, progress, index) = (hub.subscribe(), progress, index)
            return Task {
                for await snapshot in updates {
                    progress.advanced(index: index, bytesCompleted: snapshot.bytesCompleted, bytesWritten: snapshot.bytesWritten)
                }
            }
        }

        /// Ends the file in the operation (`error` set if it failed: a failed file counts its
        /// source's size as done, as a file of an engine does) and prints its `--progress=json`
        /// line.
        func finish(bytes: Int64?, written: Int64?, error: String?, options: CommonOptions) {
            var done = bytes ?? 0
            if bytes == nil, case .file(let path) = source, let status = try? FileStatus.of(path), status.kind == .regular {
                done = status.size
            }
            let snapshot = progress.finished(index: index, file: source.name, bytes: done, written: written, error: error)
            if options.progress == .json { Console.writeError(snapshot.jsonLine() + "\n") }
        }
    }

    /// The refusal to write `path` when this run created the file there (a later operand never
    /// overwrites an earlier one's output, as `cp`), or `nil`.
    func createdFileRefusal(_ path: Pathname) -> FileError? {
        guard let existing = try? FileStatus.of(path), created.contains(existing) else { return nil }
        return FileError(
            code: .alreadyExists, operation: .create, path: path,
            reason: "will not overwrite a file this run just created with '\(source.name)'")
    }

    /// After a copy that succeeded: remembers the file created, prints the warnings, removes
    /// the source for `--rm` (or says why it is kept), prints the `--verbose` report.
    ///
    /// - Parameter warnings: the source's own (a range's segment that did not match its index).
    /// - Parameter unsynced: the directories the copier could not sync: a file renamed into one
    ///   is in place, but not known to be durable (a warning; `--rm` keeps its source).
    private func succeed(
        _ committed: Copier.Committed, warnings sourceWarnings: [StageWarning], unsynced: [Pathname: FileError], options: CommonOptions
    ) async -> Outcome {
        let report = committed.report
        if case .file(let path) = destination, let status = try? FileStatus.of(path), status.kind == .regular {
            created.insert(status)
        }
        if CommitGate.shared.interruption != nil {
            // Interrupted after the commit point: the output is complete, and said so; the
            // source is kept.
            if case .file(let path) = destination { SignalWatcher.reportWritten(path) }
            return .cancelled
        }
        var warnings = sourceWarnings + report.warnings + committed.warnings
        var isDurable = committed.isDurableOnceDirectorySynced
        if case .file(let path) = destination, let error = unsynced[path.directory] {
            warnings.append(StageWarning("'\(path)' is in place, but \(error)"))
            isDurable = false
        }
        if case .notVerified(let reason) = report.verification {
            warnings.append(StageWarning("not verified: \(reason)"))
        }
        if !options.quiet {
            for warning in warnings { Console.message("\(verb) '\(source.name)': \(warning)") }
        }
        if removesSource, case .file(let path) = source {
            let removals = DirectorySyncBatch()
            if let kept = keepReason(
                path, hasWarnings: !warnings.isEmpty, isDurable: isDurable, opened: report.sourceStatus, options: options,
                removals: removals) {
                let warning = StageWarning("kept '\(path)': \(kept)")
                if !options.quiet { Console.message(warning.message) }
                warnings.append(warning)
            }
            warnings += Self.synchronizeRemovals(removals, quiet: options.quiet).map { StageWarning($0) }
        }
        if options.verbose { reportVerbosely(report, options: options) }
        return .success(warnings: warnings)
    }

    /// Reports a failure, before the copy started (`display` is `nil`) or during it: the last
    /// progress line, with its `"error"` for `--progress=json` (for a file of an operation, its
    /// line in the operation), then the message, if the failure has one (a signal and a closed
    /// output pipe are quiet).
    ///
    /// - Parameter warnings: the source's own, met before it failed: printed before its message.
    private func fail(
        _ error: any Error, display: ProgressDisplay?, file: OperationFile?, options: CommonOptions, warnings: [StageWarning] = []
    ) async -> Outcome {
        let (outcome, message) = classify(error)
        let lastError = progressError(error, (outcome, message))
        if let file {
            file.finish(bytes: nil, written: nil, error: lastError, options: options)
        } else if let display {
            // The last progress line must not read as a success.
            if case .cancelled = outcome { await display.finish(.interrupted) } else { await display.finish(.failed(lastError)) }
        } else if options.progress == .json {
            // Failed before the copy started: still one last line, with "done" and "error".
            let nothing = ProgressSnapshot(
                bytesCompleted: 0, bytesWritten: 0, totalBytes: nil, fraction: nil, elapsed: .zero,
                bytesPerSecond: 0, bufferedBytes: 0, peakBufferedBytes: 0, producerSuspended: .zero, isFinal: true)
            Console.writeError(nothing.jsonLine(done: true, error: lastError) + "\n")
        }
        if !options.quiet {
            for warning in warnings { Console.message("\(verb) '\(source.name)': \(warning)") }
        }
        if let message { Console.message(message) }
        if case .failure = outcome { return .failure(message: message) }
        return outcome
    }

    /// Why `--rm` keeps the source `path` (a warning, exit 2), or `nil` once it removed it
    /// through `removals` (``DirectorySyncBatch/removeFile(at:)``, whose directory `fsync(2)`
    /// then makes the removal durable: ``synchronizeRemovals(_:quiet:)``).
    func keepReason(
        _ path: Pathname, hasWarnings: Bool, isDurable: Bool, opened: FileStatus?, options: CommonOptions, removals: DirectorySyncBatch
    ) -> String? {
        // The source holds bytes the output does not (trailing garbage).
        if hasWarnings { return "its output differs from it (see the warning above)" }
        if !isDurable {
            return "--rm removes a source only once its output is a durable regular file"
        }
        if let status = try? FileStatus.of(path, followsLinks: false), let refusal = SourceRemoval.refusal(of: status, force: options.force) {
            return refusal
        }
        guard let opened else { return "its status when it was opened is not known" }
        let outcome = SourceRemoval.remove(path, opened: opened, removals: removals)
        if let note = outcome.note, options.verbose, !options.quiet { Console.message("'\(path)': \(note)") }
        return outcome.kept
    }

    /// `fsync(2)` of each directory sources were removed from, so that a crash once the
    /// command returned cannot bring a removed source back: the removal is durable, as the
    /// copy is. A directory that cannot be synced is a warning.
    ///
    /// - Returns: the warnings, printed unless `quiet`.
    static func synchronizeRemovals(_ removals: DirectorySyncBatch, quiet: Bool) -> [String] {
        // A directory that is gone was removed too (`copy -r --rm`): its parent's sync holds that.
        removals.synchronize().filter { $0.value.errno != .noSuchFileOrDirectory }.sorted { $0.key.description < $1.key.description }.map {
            directory, error in
            let warning = "removed the sources in '\(directory)', but their removal is not known to be durable: \(error)"
            if !quiet { Console.message(warning) }
            return warning
        }
    }

    func classify(_ error: any Error) -> (result: Outcome, message: String?) {
        if error is CancellationError { return (.cancelled, nil) }
        if let error = error as? FileError {
            if error.code == .closed, case .descriptor(_, let name) = destination, error.path == name {
                return (.brokenPipe, nil)
            }
            // The library words it as a copy; compress and decompress name their own verb.
            if error.code == .sameFile, verb != "copy", let path = error.path {
                return (.failure(message: nil), "cannot \(verb) '\(source.name)' to '\(path)': \(error.reason ?? "source and destination are the same file")")
            }
            return (.failure(message: nil), error.messageNamingForce)
        }
        return (.failure(message: nil), "cannot \(verb) '\(source.name)': \(error)")
    }

    /// The `"error"` of the last `--progress=json` line: the message printed, or `interrupted`
    /// for a signal wherever it landed (opening a FIFO, reading, writing), never a Swift type name.
    private func progressError(_ error: any Error, _ outcome: (result: Outcome, message: String?)) -> String {
        if let message = outcome.message { return message }
        if case .cancelled = outcome.result { return "interrupted" }
        return (error as? FileError)?.description ?? "cannot \(verb) '\(source.name)': \(error)"
    }
}

extension FileError {
    /// The message of a command: ``description``, and for a destination that exists (and was
    /// not overwritten) the option that overrides the refusal, `(use --force to overwrite)`:
    /// the library states the fact; the option is the command's to name.
    var messageNamingForce: String {
        code == .alreadyExists && errno == .fileExists ? description + " (use --force to overwrite)" : description
    }
}
