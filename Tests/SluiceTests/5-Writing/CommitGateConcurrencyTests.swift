#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
import Testing
@testable import Sluice
import SluiceTestSupport

/// The gate's lock covers decisions, not system calls: a temporary file is created and renamed
/// outside it (so the files of a tree do so in parallel), and the orders that this opens are
/// fixed here: the gate closing while a temporary file is being created, and a rename that
/// calls into the gate.
@Suite(.timeLimit(.minutes(3)))
struct CommitGateConcurrencyTests {
    /// A named temporary file registered with `gate` (closed) for the destination `out` in
    /// `directory` (these orders are about a name that must be removed: `O_TMPFILE` refused).
    static func registerTemporary(
        in directory: ScratchDirectory, gate: CommitGate
    ) throws -> (destination: FileLocation, ticket: CommitGate.Ticket, temporary: FileLocation) {
        let destination = FileLocation(path: directory.appending("out"))
        let (ticket, descriptor, temporary) = try gate.register(destination: destination.path) { () throws(FileError) in
            try FileSink.createTemporaryFile(beside: destination, mode: 0o600, system: .refusingUnnamedFiles)
        }
        try descriptor.close()
        return (destination, ticket, try #require(temporary))
    }

    @Test func aTemporaryCreatedWhileTheGateClosesIsRemovedBeforeRemoveUncommittedReturns() async throws {
        try await withScratchDirectory { directory in
            let gate = CommitGate()
            let destination = FileLocation(path: directory.appending("out"))
            let returned = LockedValue(false)
            // Blocking waits and the closer on threads of their own, never the cooperative pool.
            let (threw, sawCloserWaiting) = try await onOwnThread { () -> (Bool, Bool) in
                let closer = DispatchSemaphore(value: 0)
                let sawCloserWaiting = LockedValue(false)
                var threw = false
                do {
                    _ = try gate.register(destination: destination.path) { () throws(FileError) in
                        // The gate closes while this file is being created (hostile order).
                        DedicatedThread.start(name: "closer") {
                            gate.removeUncommitted()
                            returned.withLock { $0 = true }
                            closer.signal()
                        }
                        gate.waitUntilClosed()
                        let created = try FileSink.createTemporaryFile(beside: destination, mode: 0o600, system: .refusingUnnamedFiles)
                        // removeUncommitted cannot return while a creation is under way.
                        sawCloserWaiting.withLock { $0 = !returned.withLock { $0 } }
                        return created
                    }
                } catch {
                    threw = error is CancellationError
                }
                closer.wait()
                return (threw, sawCloserWaiting.withLock { $0 })
            }
            #expect(threw)
            #expect(sawCloserWaiting)
            let left = try entries(in: directory.path)
            #expect(left.isEmpty)
            #expect(gate.registeredFileCount == 0)
        }
    }

    @Test func theRenameRunsOutsideTheGatesLock() async throws {
        try await withScratchDirectory { directory in
            let gate = CommitGate()
            let (destination, ticket, temporary) = try Self.registerTemporary(in: directory, gate: gate)
            try gate.commit(ticket) { () throws(FileError) in
                // Under the lock, this would wait for ever.
                #expect(gate.interruption == nil)
                #expect(gate.temporaryFiles.isEmpty)  // past its commit point already
                if case .failure(let error) = temporary.rename(to: destination, flags: 0, system: .live) {
                    throw FileError.rename(path: destination.path, errno: error)
                }
            }
            gate.unregister(ticket)
            let left = try entries(in: directory.path)
            #expect(left == ["out"])
        }
    }

    @Test func removeUncommittedWaitsForARenameUnderWayAndNamesItsFile() async throws {
        try await withScratchDirectory { directory in
            let gate = CommitGate()
            let (destination, ticket, temporary) = try Self.registerTemporary(in: directory, gate: gate)
            let named = LockedValue<[Pathname]?>(nil)
            // Blocking waits and the closer on threads of their own, never the cooperative pool.
            let sawCloserWaiting = try await onOwnThread { () -> Bool in
                let closer = DispatchSemaphore(value: 0)
                var sawCloserWaiting = false
                try gate.commit(ticket) { () throws(FileError) in
                    // A second signal's exit starts while the rename is under way (hostile order).
                    DedicatedThread.start(name: "closer") {
                        let written = gate.removeUncommitted()
                        named.withLock { $0 = written }
                        closer.signal()
                    }
                    gate.waitUntilClosed()
                    sawCloserWaiting = named.withLock { $0 == nil }
                    if case .failure(let error) = temporary.rename(to: destination, flags: 0, system: .live) {
                        throw FileError.rename(path: destination.path, errno: error)
                    }
                }
                closer.wait()
                return sawCloserWaiting
            }
            #expect(sawCloserWaiting)
            #expect(named.withLock { $0 } == [destination.path])
            let left = try entries(in: directory.path)
            #expect(left == ["out"])
            gate.unregister(ticket)
        }
    }

    @Test func aRenameThatFailsLeavesTheFileBeforeItsCommitPoint() async throws {
        try await withScratchDirectory { directory in
            let gate = CommitGate()
            let (destination, ticket, temporary) = try Self.registerTemporary(in: directory, gate: gate)
            #expect(throws: FileError.self) {
                try gate.commit(ticket) { () throws(FileError) in
                    throw FileError.rename(path: destination.path, errno: .ioError)
                }
            }
            // Not committed: a program exiting now removes it.
            #expect(gate.temporaryFiles == [temporary.path])
            #expect(gate.removeUncommitted().isEmpty)
            let left = try entries(in: directory.path)
            #expect(left.isEmpty)
        }
    }
}
