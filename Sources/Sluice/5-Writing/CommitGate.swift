#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The commit decisions of file destinations, made as one atomic step with the intake of
/// interrupting signals.
///
/// A ``FileSink`` writes a temporary file and, at its *commit point*, renames it over the
/// destination. Whether an interrupt (SIGINT, SIGTERM, ...) aborts that file or comes after
/// it must not depend on when a watcher thread gets round to a signal: in a multi-threaded
/// process, the Ctrl-C that killed an upstream `pv` can still be undelivered when the reader
/// sees the end of input it caused, and a commit would then go ahead with a short file. So the
/// gate decides under one lock:
///
/// - `commit(_:rename:)` (called by the sink) first takes any signal that is pending, through
///   the `signalSource` the program installed (a non-blocking read of a `signalfd(2)`), then
///   decides to rename only if no interruption has been recorded. A signal taken before the
///   decision aborts the file; one taken after it finds the file committed (its rename under
///   way or done). The rename itself runs after the lock is released, so that the files of a
///   tree rename (and create their temporaries) in parallel.
/// - ``receivePendingSignal()`` (called by the program's signal thread when its `signalfd(2)`
///   is readable) takes the signal under the same lock.
///
/// A signal therefore lands on one side of each commit, whichever thread takes it. A program
/// that must exit before its work has wound down (a watchdog after a grace period, a second
/// signal) calls ``removeUncommitted()``, which removes every temporary file still before its
/// commit point and closes the gate, and ``waitForCommittedFiles()`` to let the directory
/// `fsync(2)` of files already renamed finish, so those can be named as written.
///
/// One decision is made per file in flight: several sinks may commit through one gate.
///
/// ## Concurrency contract
/// Every method may be called from any thread. `commit(_:rename:)` runs the signal source under
/// the gate's lock (a short system call that must not call back into the gate), and the rename
/// after it; the interruption handler runs after the lock is released, on the thread that
/// recorded the interruption. ``removeUncommitted()`` and ``waitForCommittedFiles()`` block
/// their thread.
package final class CommitGate: Sendable {
    /// The process-wide gate that ``FileSink`` uses unless given another.
    package static let shared = CommitGate()

    /// Identifies one file in flight.
    struct Ticket: Hashable, Sendable {
        fileprivate let id: Int
    }

    private struct File {
        /// The temporary file's name; `nil` for an unnamed (`O_TMPFILE`) file, which nothing
        /// needs to remove (it is gone with its descriptor, at the latest when the process exits).
        var temporary: FileLocation?
        var destination: Pathname
        /// The system calls the file was made with, which remove it.
        var system: SystemCalls
        /// Past its commit point: renamed into place (the directory `fsync(2)` may still be
        /// running), or being renamed (``isRenaming``).
        var isCommitted: Bool
        /// Past its commit point, its `rename(2)` not yet returned.
        var isRenaming = false
    }

    private struct State {
        var interruption: Int32?
        /// Set by ``removeUncommitted()``: no commit may happen any more.
        var isClosed = false
        var nextID = 0
        var files: [Int: File] = [:]
        /// Temporary files being created (outside the lock): ``removeUncommitted()`` waits for
        /// them, as each removes its own once it finds the gate closed.
        var creating = 0
        var signalSource: (@Sendable () -> Int32?)?
        var interruptionHandler: (@Sendable (Int32) -> Void)?
    }

    /// Threads in ``removeUncommitted()`` and ``waitForCommittedFiles()`` block on its
    /// condition, woken by the creations, renames and ends they wait for.
    private let state = LockedCondition(State())

    /// Creates a gate with no signal source: only ``interrupt(by:)`` records interruptions.
    package init() {}

    /// The first interrupting signal recorded, if any.
    package var interruption: Int32? { state.withLock { $0.interruption } }

    /// Installs how the gate takes a pending signal: `take` consumes one pending signal without
    /// blocking and returns its number, or `nil` if none is pending (for example a read of a
    /// non-blocking `signalfd(2)` over signals that every thread blocks).
    ///
    /// `take` runs under the gate's lock, at every commit point and in
    /// ``receivePendingSignal()``; it must not block or call into the gate.
    package func setSignalSource(_ take: @escaping @Sendable () -> Int32?) {
        state.withLock { $0.signalSource = take }
    }

    /// Sets what runs once, with the signal's number, when the first interruption is recorded
    /// (by ``interrupt(by:)``, ``receivePendingSignal()`` or a commit that took a pending
    /// signal): typically, cancel the running operation. It runs outside the gate's lock, on
    /// the thread that recorded the interruption; if one was recorded already, it runs at once
    /// on the caller's thread.
    package func setInterruptionHandler(_ handler: @escaping @Sendable (Int32) -> Void) {
        let pending = state.withLock { state -> Int32? in
            state.interruptionHandler = handler
            return state.interruption
        }
        if let pending { handler(pending) }
    }

    /// What ``receivePendingSignal()`` took.
    package enum Intake: Equatable, Sendable {
        /// The first interruption: commits not yet made are refused from now on.
        case first(Int32)
        /// A signal after the first (a second Ctrl-C).
        case repeated(Int32)
    }

    /// Takes one pending signal through the signal source, under the gate's lock, and records it.
    ///
    /// - Returns: the signal taken, or `nil` if none was pending (a commit took it first).
    package func receivePendingSignal() -> Intake? {
        let (intake, handler) = state.withLock { state -> (Intake?, (@Sendable (Int32) -> Void)?) in
            guard let signal = state.signalSource?() else { return (nil, nil) }
            return Self.record(signal, in: &state)
        }
        if let intake, case .first(let signal) = intake { handler?(signal) }
        return intake
    }

    /// Records an interruption as if `signal` had been taken: the synthetic signal of tests, or
    /// a program's own reason to stop.
    ///
    /// - Returns: `true` if this is the first interruption recorded.
    @discardableResult
    package func interrupt(by signal: Int32) -> Bool {
        let (intake, handler) = state.withLock { Self.record(signal, in: &$0) }
        guard case .first = intake else { return false }
        handler?(signal)
        return true
    }

    private static func record(
        _ signal: Int32, in state: inout State
    ) -> (Intake, (@Sendable (Int32) -> Void)?) {
        guard state.interruption == nil else { return (.repeated(signal), nil) }
        state.interruption = signal
        return (.first(signal), state.interruptionHandler)
    }

    /// Removes the temporary file of every file still before its commit point (`unlink(2)`,
    /// errors ignored) and closes the gate: every later commit is refused. Returns once no
    /// temporary file is being created (one created meanwhile is removed by its creator) and no
    /// rename is under way (a rename that failed leaves its file before its commit point: removed
    /// too), woken as each ends.
    ///
    /// Safe from any thread while sinks are writing (their later writes go to an unlinked file).
    /// Blocks its thread: call it from a thread of the program's own.
    ///
    /// - Returns: the destinations of files past their commit point whose sink has not finished
    ///   (their directory `fsync(2)` may still run): they hold the new bytes.
    @discardableResult
    package func removeUncommitted() -> [Pathname] {
        state.withLock { state in
            state.isClosed = true
            Self.removeUncommitted(&state)
        }
        // Creations and renames run outside the lock: wait for them to return, then remove what
        // a failed rename left before its commit point.
        return state.wait { state in
            guard state.creating == 0 && !state.files.values.contains(where: \.isRenaming) else { return nil }
            Self.removeUncommitted(&state)
            return state.files.values.filter(\.isCommitted).map(\.destination)
        }!
    }

    private static func removeUncommitted(_ state: inout State) {
        for (id, file) in state.files where !file.isCommitted {
            file.temporary?.removeQuietly(system: file.system)
            state.files[id] = nil
        }
    }

    /// Blocks the calling thread until every file past its commit point has finished (its
    /// directory `fsync(2)` done), woken as each is unregistered. Call it after ``removeUncommitted()``
    /// from a thread of the program's own, never from the cooperative pool.
    package func waitForCommittedFiles() {
        _ = state.wait { $0.files.values.contains { $0.isCommitted } ? nil : () }
    }

    /// Blocks its thread until ``removeUncommitted()`` has closed the gate, woken as it does
    /// (for tests that order an event after it).
    func waitUntilClosed() {
        _ = state.wait { $0.isClosed ? () : nil }
    }

    /// The named temporary files registered now, before their commit point (an unnamed
    /// `O_TMPFILE` file has no name to list).
    package var temporaryFiles: Set<Pathname> {
        state.withLock { Set($0.files.values.lazy.filter { !$0.isCommitted }.compactMap(\.temporary?.path)) }
    }

    /// The count of files registered now, before or past their commit point: 0 once every
    /// sink has committed or aborted (a file left registered would hold up
    /// ``waitForCommittedFiles()`` or be removed by ``removeUncommitted()``).
    var registeredFileCount: Int {
        state.withLock { $0.files.count }
    }

    // MARK: For FileSink

    /// Creates (with `create`, outside the lock) and registers a temporary file that will be
    /// renamed over `destination`: a program exiting after ``removeUncommitted()`` never
    /// leaves one behind, since none is created once the gate is closed, and one whose creation
    /// was under way when it closed is removed here before ``removeUncommitted()`` returns.
    ///
    /// - Parameter system: the calls `create` makes the file with, which close and remove it.
    /// - Throws: `CancellationError` if the gate is closed (nothing left); what `create`
    ///   throws.
    func register(
        destination: Pathname, system: SystemCalls = .live, create: () throws(FileError) -> (Descriptor, FileLocation?)
    ) throws -> (Ticket, Descriptor, FileLocation?) {
        let ticket = try state.withLock { state throws in
            guard !state.isClosed else { throw CancellationError() }
            state.creating += 1
            defer { state.nextID += 1 }
            return Ticket(id: state.nextID)
        }
        let created = Result { () throws(FileError) in try create() }
        return try state.withLock { state throws in
            state.creating -= 1
            let (descriptor, temporary) = try created.get()
            guard !state.isClosed else {
                try? descriptor.close(system: system)
                temporary?.removeQuietly(system: system)
                throw CancellationError()
            }
            state.files[ticket.id] = File(temporary: temporary, destination: destination, system: system, isCommitted: false)
            return (ticket, descriptor, temporary)
        }
    }

    /// Forgets a file whose temporary was removed (aborted) or whose commit has finished.
    func unregister(_ ticket: Ticket) {
        _ = state.withLock { $0.files.removeValue(forKey: ticket.id) }
    }

    /// The commit point: takes any pending signal and, only if no interruption has been
    /// recorded and the gate is open, marks the file committed, under the lock; then runs
    /// `rename`. A rename that fails marks it uncommitted again (its sink then removes the
    /// temporary file).
    ///
    /// - Throws: `CancellationError` if an interruption was recorded (also one taken here) or
    ///   the gate was closed: nothing was renamed; the error `rename` throws.
    func commit(_ ticket: Ticket, rename: () throws(FileError) -> Void) throws {
        let (outcome, handler) = state.withLock { state -> (Result<Void, any Error>, (@Sendable (Int32) -> Void)?) in
            var handler: (@Sendable (Int32) -> Void)?
            if let signal = state.signalSource?() {
                (_, handler) = Self.record(signal, in: &state)
            }
            guard state.interruption == nil, !state.isClosed, state.files[ticket.id] != nil else {
                return (.failure(CancellationError()), handler)
            }
            state.files[ticket.id]?.isCommitted = true
            state.files[ticket.id]?.isRenaming = true
            return (.success(()), handler)
        }
        if let handler, let signal = interruption { handler(signal) }
        try outcome.get()
        let renamed = Result { () throws(FileError) in try rename() }
        state.withLock { state in
            state.files[ticket.id]?.isRenaming = false
            if case .failure = renamed { state.files[ticket.id]?.isCommitted = false }
        }
        try renamed.get()
    }
}
