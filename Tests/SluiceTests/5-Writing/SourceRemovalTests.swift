#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Sluice
import SluiceTestSupport

/// ``SourceRemoval``: a source is removed only if it is the file it was when opened, unchanged
/// (size, modification and status change time), and open for writing nowhere.
@Suite(.timeLimit(.minutes(3)))
struct SourceRemovalTests {
    /// A file in a new scratch directory, and its status now (as when a copy opened it).
    static func source() throws -> (ScratchDirectory, Pathname, FileStatus) {
        let directory = try ScratchDirectory()
        let path = directory.appending("source")
        try writeFile(path, Array("line 1\nline 2\n".utf8))
        return (directory, path, try FileStatus.of(path))
    }

    @Test func anUnchangedSourceIsRemoved() throws {
        let (directory, path, opened) = try Self.source()
        defer { directory.remove() }
        let removals = DirectorySyncBatch()
        let outcome = SourceRemoval.remove(path, opened: opened, removals: removals)
        #expect(outcome.kept == nil, "\(outcome)")
        #expect(outcome.note == nil, "root or the owner takes a lease: \(outcome)")
        #expect(throws: FileError.self) { try FileStatus.of(path) }
        #expect(removals.synchronize().isEmpty)
    }

    /// A write between the read and the removal, seen through the system-call seam: the
    /// `fstat(2)` of the removal answers a modification time one nanosecond later.
    @Test func aSourceChangedSinceItWasOpenedIsKept() throws {
        let (directory, path, opened) = try Self.source()
        defer { directory.remove() }
        var system = SystemCalls.live
        system.status = { descriptor in
            SystemCalls.liveStatus(descriptor).map { raw in
                var changed = raw
                changed.st_mtim.tv_nsec = (changed.st_mtim.tv_nsec + 1) % 1_000_000_000
                return changed
            }
        }
        let outcome = SourceRemoval.remove(path, opened: opened, removals: DirectorySyncBatch(), system: system)
        #expect(outcome.kept == "it changed since it was opened to be read (modification time)")
        #expect(try FileStatus.of(path).isSameFile(as: opened))
    }

    /// Appended to for real, and replaced by another file of the same name and size.
    @Test func aSourceAppendedToOrReplacedIsKept() throws {
        let (directory, path, opened) = try Self.source()
        defer { directory.remove() }
        let appended = try Descriptor.open(path, O_WRONLY | O_APPEND)
        _ = "line 3\n".withCString { write(appended.rawValue, $0, 7) }
        try appended.close()
        let grown = SourceRemoval.remove(path, opened: opened, removals: DirectorySyncBatch())
        #expect(grown.kept?.hasPrefix("it changed since it was opened to be read (size 14 -> 21 bytes") == true, "\(grown)")

        let replacement = directory.appending("replacement")
        try writeFile(replacement, Array("line 1\nline 2\n".utf8))
        #expect(rename(replacement.description, path.description) == 0)
        let replaced = SourceRemoval.remove(path, opened: opened, removals: DirectorySyncBatch())
        #expect(replaced.kept?.hasPrefix("it changed since it was opened to be read (another file") == true, "\(replaced)")
        #expect(FileStatus.exists(path))
    }

    /// Open for writing (here by this process, which the lease counts as any other): kept.
    @Test func aSourceOpenForWritingIsKept() throws {
        let (directory, path, opened) = try Self.source()
        defer { directory.remove() }
        let writer = try Descriptor.open(path, O_WRONLY | O_APPEND)
        defer { try? writer.close() }
        let outcome = SourceRemoval.remove(path, opened: opened, removals: DirectorySyncBatch())
        #expect(outcome.kept == "another process has it open for writing")
        #expect(try FileStatus.of(path).isSameFile(as: opened))
    }
}

/// A writer's open that comes while the lease is held, between the check and the unlink: made
/// through the seam, as the check's `fstat(2)` returns, by an `open(2)` for writing with
/// `O_NONBLOCK` (which fails with `EWOULDBLOCK` but begins the lease's break, as a blocking
/// writer's open would, and sends the holder the lease's signal).
@Suite(.timeLimit(.minutes(3)))
struct SourceRemovalLeaseBreakTests {
    @Test func aWriterThatOpensItDuringTheRemovalKeepsIt() throws {
        let (directory, path, opened) = try SourceRemovalTests.source()
        defer { directory.remove() }
        let opens = LockedValue<[Int32]>([])
        var system = SystemCalls.live
        system.status = { descriptor in
            let status = SystemCalls.liveStatus(descriptor)
            let writer = open(path.description, O_WRONLY | O_NONBLOCK)
            opens.withLock { $0.append(writer < 0 ? errno : 0) }
            if writer >= 0 { close(writer) }
            return status
        }
        let outcome = SourceRemoval.remove(path, opened: opened, removals: DirectorySyncBatch(), system: system)
        #expect(opens.withLock { $0 } == [EWOULDBLOCK], "the writer's open did not meet the lease")
        #expect(outcome.kept == "another process opened it for writing as it was being removed", "\(outcome)")
        #expect(try FileStatus.of(path).isSameFile(as: opened))
    }
}

extension FileStatus {
    static func exists(_ path: Pathname) -> Bool { (try? FileStatus.of(path)) != nil }
}
