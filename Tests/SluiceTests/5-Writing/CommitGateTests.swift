#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Sluice
import SluiceTestSupport

/// C28 and C29 in-process: the commit point against interruptions taken in both orders. A
/// synthetic signal (``CommitGate/interrupt(by:)``, or a signal source that reports one pending)
/// is delivered at a chosen event: before the commit, inside the file's `fsync(2)` (through the
/// system-call seam), inside the directory's `fsync(2)` after the rename.
@Suite(.timeLimit(.minutes(3)))
struct CommitGateTests {
    /// System calls whose `fsync` runs `onFsync` with the call's ordinal (1: the file's,
    /// 2: the directory's) before syncing for real.
    static func system(onFsync: @escaping @Sendable (Int) -> Void) -> SystemCalls {
        let calls = Counter()
        var system = SystemCalls.live
        system.fsync = { descriptor in
            onFsync(calls.increment())
            return SystemCalls.live.fsync(descriptor)
        }
        return system
    }

    /// A destination holding `OLD`, a sink over it that has written `data`, and the gate.
    static func sinkOverOldBytes(
        in directory: ScratchDirectory, gate: CommitGate, system: SystemCalls = .live
    ) async throws -> (FileSink, Pathname, [UInt8]) {
        let destination = directory.appending("out.bin")
        try writeFile(destination, Array("OLD".utf8))
        let data = randomBytes(count: 10_000, seed: 28)
        let sink = try await FileSink.create(
            at: FileLocation(path: destination), source: nil, options: .init(replacesExisting: true), system: system, gate: gate)
        try await sink.write(Chunk(data))
        return (sink, destination, data)
    }

    @Test func anInterruptionBeforeTheCommitPointAbortsTheFile() async throws {
        try await withScratchDirectory { directory in
            let gate = CommitGate()
            let (sink, destination, _) = try await Self.sinkOverOldBytes(in: directory, gate: gate)
            #expect(gate.interrupt(by: SIGINT))
            await #expect(throws: CancellationError.self) { try await sink.commit() }
            await sink.abort()
            #expect(try readFile(destination) == Array("OLD".utf8))
            #expect(try temporaryFiles(in: directory.path).isEmpty)
            #expect(gate.temporaryFiles.isEmpty)
        }
    }

    @Test func anInterruptionDuringTheFilesFsyncAbortsTheFile() async throws {
        try await withScratchDirectory { directory in
            let gate = CommitGate()
            // The signal comes while the commit waits on the file's fsync, just before the rename.
            let system = Self.system { call in if call == 1 { gate.interrupt(by: SIGTERM) } }
            let (sink, destination, _) = try await Self.sinkOverOldBytes(in: directory, gate: gate, system: system)
            await #expect(throws: CancellationError.self) { try await sink.commit() }
            await sink.abort()
            #expect(try readFile(destination) == Array("OLD".utf8))
            #expect(try temporaryFiles(in: directory.path).isEmpty)
            #expect(gate.interruption == SIGTERM)
        }
    }

    @Test func aPendingSignalIsTakenAtTheCommitPoint() async throws {
        try await withScratchDirectory { directory in
            let gate = CommitGate()
            // The signal was generated (the upstream died of it, the input ended), and no
            // watcher thread has taken it yet: the commit point takes it itself.
            let pending = LockedValue<Int32?>(SIGINT)
            gate.setSignalSource { pending.withLock { value in defer { value = nil }; return value } }
            let handled = LockedValue<[Int32]>([])
            gate.setInterruptionHandler { signal in handled.withLock { $0.append(signal) } }
            let (sink, destination, _) = try await Self.sinkOverOldBytes(in: directory, gate: gate)
            await #expect(throws: CancellationError.self) { try await sink.commit() }
            await sink.abort()
            #expect(try readFile(destination) == Array("OLD".utf8))
            #expect(gate.interruption == SIGINT)
            #expect(handled.withLock { $0 } == [SIGINT])
            #expect(gate.receivePendingSignal() == nil)
        }
    }

    @Test func anInterruptionAfterTheRenameFindsTheFileCommitted() async throws {
        try await withScratchDirectory { directory in
            let gate = CommitGate()
            let namedDuringSync = LockedValue<[Pathname]>([])
            // The signal comes while the directory is synced after the rename; a watchdog that
            // fires then names the file as written and lets the sync finish.
            let system = Self.system { call in
                guard call == 2 else { return }
                gate.interrupt(by: SIGTERM)
                let named = gate.removeUncommitted()
                namedDuringSync.withLock { $0 = named }
            }
            let (sink, destination, data) = try await Self.sinkOverOldBytes(in: directory, gate: gate, system: system)
            try await sink.commit()
            #expect(try readFile(destination) == data)
            #expect(await sink.isDurablyCommitted)
            #expect(namedDuringSync.withLock { $0 } == [destination])
            #expect(gate.interruption == SIGTERM)
            gate.waitForCommittedFiles()  // returns: the sink has finished
        }
    }

    @Test func removeUncommittedRemovesTemporariesAndRefusesLaterCommits() async throws {
        try await withScratchDirectory { directory in
            let gate = CommitGate()
            // A named temporary file (O_TMPFILE refused), which must be removed by name.
            let (sink, destination, _) = try await Self.sinkOverOldBytes(in: directory, gate: gate, system: .refusingUnnamedFiles)
            #expect(gate.temporaryFiles.count == 1)
            #expect(gate.removeUncommitted().isEmpty)
            #expect(try temporaryFiles(in: directory.path).isEmpty)
            await #expect(throws: CancellationError.self) { try await sink.commit() }
            await sink.abort()
            #expect(try readFile(destination) == Array("OLD".utf8))
        }
    }

    @Test func aClosedGateCreatesNoTemporaryFile() async throws {
        try await withScratchDirectory { directory in
            let gate = CommitGate()
            gate.removeUncommitted()  // the watchdog ran: the process is about to exit
            await #expect(throws: CancellationError.self) {
                _ = try await FileSink.create(
                    at: FileLocation(path: directory.appending("late")), source: nil, options: .init(), system: .live, gate: gate)
            }
            let left = try entries(in: directory.path)
            #expect(left.isEmpty)
        }
    }

    @Test func oneDecisionPerFileInFlight() async throws {
        try await withScratchDirectory { directory in
            let gate = CommitGate()
            let first = try await FileSink.create(
                at: FileLocation(path: directory.appending("a")), source: nil, options: .init(synchronizes: false), system: .live, gate: gate)
            let second = try await FileSink.create(
                at: FileLocation(path: directory.appending("b")), source: nil, options: .init(synchronizes: false), system: .live, gate: gate)
            try await first.write(Chunk(Array("A".utf8)))
            try await second.write(Chunk(Array("B".utf8)))
            try await first.commit()
            gate.interrupt(by: SIGHUP)
            await #expect(throws: CancellationError.self) { try await second.commit() }
            await second.abort()
            #expect(try readFile(directory.appending("a")) == Array("A".utf8))
            #expect(!exists(directory.appending("b")))
            #expect(try temporaryFiles(in: directory.path).isEmpty)
        }
    }

    @Test func signalsAfterTheFirstAreRepeated() {
        let gate = CommitGate()
        let queue = LockedValue<[Int32]>([SIGINT, SIGTERM])
        gate.setSignalSource { queue.withLock { $0.isEmpty ? nil : $0.removeFirst() } }
        let handled = LockedValue<[Int32]>([])
        gate.setInterruptionHandler { signal in handled.withLock { $0.append(signal) } }
        #expect(gate.receivePendingSignal() == .first(SIGINT))
        #expect(gate.receivePendingSignal() == .repeated(SIGTERM))
        #expect(gate.receivePendingSignal() == nil)
        #expect(gate.interruption == SIGINT)
        #expect(handled.withLock { $0 } == [SIGINT])
        // A handler set after the interruption runs at once.
        let late = LockedValue<Int32?>(nil)
        gate.setInterruptionHandler { signal in late.withLock { $0 = signal } }
        #expect(late.withLock { $0 } == SIGINT)
    }
}
