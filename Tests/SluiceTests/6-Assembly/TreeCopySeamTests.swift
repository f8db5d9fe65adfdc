import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Sluice
import SluiceTestSupport
import Testing

/// A tree copy's directory calls (`openat`, `mkdirat`, `unlinkat`) and its files' calls
/// (`O_TMPFILE`, `renameat2`) refused through the system-call seam: each refusal is that
/// entry's failure, with its path and the errno, the rest of the tree is copied, nothing
/// traps or waits, and no temporary file is left anywhere.
@Suite(.timeLimit(.minutes(3)))
struct TreeCopySeamTests {
    /// `s/{a/f, b/g, c/h, l -> a}`: three directories of one file each and a link.
    static func makeTree(in scratch: ScratchDirectory) throws {
        let handle = try DirectoryHandle.open(scratch.path)
        try handle.makeDirectory("s", permissions: 0o755)
        let tree = try handle.openDirectory("s")
        for (directory, file) in [("a", "f"), ("b", "g"), ("c", "h")] {
            try tree.makeDirectory(Pathname(directory), permissions: 0o755)
            try writeFile(scratch.appending(Pathname("s/\(directory)/\(file)")), Array(file.utf8))
        }
        try tree.makeSymbolicLink("l", target: "a")
    }

    /// The real calls, with `fault` for the calls `refuses` picks (given the name and the
    /// flags of an `openat`, the name of the rest).
    static func calls(
        refusingOpenAt refusesOpen: (@Sendable (String, CInt) -> ErrorNumber?)? = nil,
        refusingMakeDirectory refusesMakeDirectory: (@Sendable (String) -> ErrorNumber?)? = nil,
        refusingUnlink refusesUnlink: (@Sendable (String) -> ErrorNumber?)? = nil,
        from base: SystemCalls = .live
    ) -> SystemCalls {
        var system = base
        let (openAt, makeDirectoryAt, unlinkAt) = (system.openAt, system.makeDirectoryAt, system.unlinkAt)
        system.openAt = { directory, path, flags, mode in
            if let errno = refusesOpen?(String(cString: path), flags) { return .failure(errno) }
            return openAt(directory, path, flags, mode)
        }
        system.makeDirectoryAt = { directory, path, mode in
            if let errno = refusesMakeDirectory?(String(cString: path)) { return .failure(errno) }
            return makeDirectoryAt(directory, path, mode)
        }
        system.unlinkAt = { directory, path, flags in
            if let errno = refusesUnlink?(String(cString: path)) { return .failure(errno) }
            return unlinkAt(directory, path, flags)
        }
        return system
    }

    /// Copies `s` to `t` through a copier whose calls (the walk's, the directories' and the
    /// files') are `system`; the report and the failures' messages.
    static func copy(
        in scratch: ScratchDirectory, system: SystemCalls = .live, replacesExisting: Bool = false, synchronizes: Bool = false,
        beforeFinalPass: (@Sendable () -> Void)? = nil
    ) async throws -> (Copier.TreeReport, [String]) {
        let copied = try await copyTreeWithCopier(
            scratch.appending("s"), to: scratch.appending("t"),
            options: .init(sink: .init(replacesExisting: replacesExisting, synchronizes: synchronizes)), system: system,
            beforeFinalPass: beforeFinalPass)
        return (copied.report, copied.failures)
    }

    /// No `.sluice-*.tmp` anywhere under `path`.
    static func expectNoTemporaries(under path: Pathname) throws {
        #expect(try temporaryFiles(in: path) == [])
        for name in try entries(in: path) {
            let child = path.appending(name)
            if (try? FileStatus.of(child, followsLinks: false))?.kind == .directory { try expectNoTemporaries(under: child) }
        }
    }

    /// The real calls, counting the `fsync(2)` and `syncfs(2)` calls and failing the latter
    /// with `syncfsError`, the former with `fsyncError`.
    static func countingSyncs(
        _ counts: LockedValue<(fsyncs: Int, syncfs: Int)>, syncfsError: ErrorNumber? = nil, fsyncError: ErrorNumber? = nil
    ) -> SystemCalls {
        var system = SystemCalls.live
        let (fsync, syncfs) = (system.fsync, system.synchronizeFileSystem)
        system.fsync = { descriptor in
            counts.withLock { $0.fsyncs += 1 }
            return fsyncError.map { .failure($0) } ?? fsync(descriptor)
        }
        system.synchronizeFileSystem = { descriptor in
            counts.withLock { $0.syncfs += 1 }
            return syncfsError.map { .failure($0) } ?? syncfs(descriptor)
        }
        return system
    }

    /// A durable copy's final pass makes the directories it changed durable at once: one
    /// `syncfs(2)` of their file system, not an `fsync(2)` of each directory (their
    /// attributes, and the new directories' names in their parents), on the file systems whose
    /// `syncfs(2)` the batches trust.
    @Test func theFinalPassSyncsItsDirectoriesWithOneSyncfs() async throws {
        try await withScratchDirectory { scratch in
            try Self.makeTree(in: scratch)
            let trusted = Copier.checksPagesOfItsFiles(try scratch.fileSystemType())
            let counts = LockedValue((fsyncs: 0, syncfs: 0))
            // Counted from the final pass on: the files' own syncs (their batches') come before,
            // the copier's sync of the directories its files were renamed into after.
            let (report, failures) = try await Self.copy(
                in: scratch, system: Self.countingSyncs(counts), synchronizes: true,
                beforeFinalPass: { counts.withLock { $0 = (0, 0) } })
            #expect(failures.isEmpty && report.failures == 0 && report.files == 3)
            // One syncfs for the six directories the pass changed, no fsync of any; then the
            // copier's finish syncs the three directories the files were renamed into, one each.
            if trusted { #expect(counts.withLock { $0 } == (3, 1)) } else { #expect(counts.withLock { $0.syncfs } == 0) }
        }
    }

    /// A `syncfs(2)` that fails (it may report another program's write-back error) is not the
    /// tree's failure: each directory the pass changed is reopened and `fsync(2)`ed instead, and
    /// only what those report fails.
    @Test func aFailedSyncfsFallsBackToAnFsyncOfEachDirectory() async throws {
        try await withScratchDirectory { scratch in
            try Self.makeTree(in: scratch)
            try #require(Copier.checksPagesOfItsFiles(try scratch.fileSystemType()), "the scratch file system's syncfs is not used")
            let counts = LockedValue((fsyncs: 0, syncfs: 0))
            let (_, failures) = try await Self.copy(
                in: scratch, system: Self.countingSyncs(counts, syncfsError: .ioError), synchronizes: true,
                beforeFinalPass: { counts.withLock { $0 = (0, 0) } })
            #expect(failures.isEmpty, "\(failures)")
            // The pass's syncfs, then the five directories it changed, each (s, a, b, c and the
            // target's parent), and the copier's three of the files' directories.
            #expect(counts.withLock { $0 } == (8, 1))
        }
        try await withScratchDirectory { scratch in
            try Self.makeTree(in: scratch)
            let counts = LockedValue((fsyncs: 0, syncfs: 0))
            let system = Self.countingSyncs(counts, syncfsError: .ioError, fsyncError: .ioError)
            let (_, failures) = try await Self.copy(in: scratch, system: system, synchronizes: true)
            #expect(!failures.isEmpty && failures.allSatisfy { $0.hasPrefix("cannot sync '") }, "\(failures)")
        }
    }

    /// Out of descriptors (`EMFILE`) when the walk opens `s/b`, with nothing held that would be
    /// released: `b` fails with its message, the others are copied.
    @Test func descriptorsRunningOutOnADirectoryFailThatDirectoryOnly() async throws {
        try await withScratchDirectory { scratch in
            try Self.makeTree(in: scratch)
            let system = Self.calls(refusingOpenAt: { name, flags in
                name == "b" && flags & O_DIRECTORY != 0 ? ErrorNumber(rawValue: EMFILE) : nil
            })
            let (report, failures) = try await Self.copy(in: scratch, system: system)
            #expect(failures == ["cannot open '\(scratch.appending("s/b"))': Too many open files"])
            #expect(report.failures == 1)
            #expect(report.files == 2)
            #expect(try readFile(scratch.appending("t/a/f")) == Array("f".utf8))
            #expect(try readFile(scratch.appending("t/c/h")) == Array("h".utf8))
            #expect(try entries(in: scratch.appending("t")).map(\.description).sorted() == ["a", "c", "l"])
        }
    }

    /// Out of descriptors when a directory's names are read (its second descriptor).
    @Test func descriptorsRunningOutOnAListingFailThatDirectoryOnly() async throws {
        try await withScratchDirectory { scratch in
            try Self.makeTree(in: scratch)
            let listings = LockedValue(0)
            // The root's listing is the first; the next one is a subdirectory's.
            // (An unnamed temporary is opened at "." too, with `O_TMPFILE`: not a listing.)
            let system = Self.calls(refusingOpenAt: { name, flags in
                guard name == ".", flags & CSluiceShims_O_TMPFILE != CSluiceShims_O_TMPFILE else { return nil }
                return listings.withLock { count in
                    count += 1
                    return count == 2 ? ErrorNumber(rawValue: EMFILE) : nil
                }
            })
            let (report, failures) = try await Self.copy(in: scratch, system: system)
            #expect(failures.count == 1, "\(failures)")
            #expect(failures.first?.hasSuffix("Too many open files") == true, "\(failures)")
            #expect(report.files == 2)
        }
    }

    /// A refused `mkdirat` (`EACCES`) of `t/b`: its contents are skipped, the rest copied.
    @Test func aRefusedMkdirSkipsThatDirectory() async throws {
        try await withScratchDirectory { scratch in
            try Self.makeTree(in: scratch)
            let system = Self.calls(refusingMakeDirectory: { $0 == "b" ? ErrorNumber(rawValue: EACCES) : nil })
            let (report, failures) = try await Self.copy(in: scratch, system: system)
            #expect(failures == ["cannot create directory '\(scratch.appending("t/b"))': Permission denied"])
            #expect(report.files == 2)
            #expect(try entries(in: scratch.appending("t")).map(\.description).sorted() == ["a", "c", "l"])
        }
    }

    /// `--force` over an existing link whose removal is refused (`EPERM`): that link fails and
    /// is left as it was; the rest is merged (into `t/s`, as `t` is a directory).
    @Test func aRefusedUnlinkLeavesTheOldEntry() async throws {
        try await withScratchDirectory { scratch in
            try Self.makeTree(in: scratch)
            let handle = try DirectoryHandle.open(scratch.path)
            try handle.makeDirectory("t", permissions: 0o755)
            try handle.openDirectory("t").makeDirectory("s", permissions: 0o755)
            try handle.openDirectory("t/s").makeSymbolicLink("l", target: "old")
            let system = Self.calls(refusingUnlink: { $0 == "l" ? ErrorNumber(rawValue: EPERM) : nil })
            let (report, failures) = try await Self.copy(in: scratch, system: system, replacesExisting: true)
            #expect(failures == ["cannot remove '\(scratch.appending("t/s/l"))': Operation not permitted"])
            #expect(report.files == 3)
            #expect(try handle.openDirectory("t/s").linkTarget(of: "l") == "old")
            #expect(try readFile(scratch.appending("t/s/b/g")) == Array("g".utf8))
        }
    }

    /// Files where `O_TMPFILE` is refused (named temporaries), and the rename of one refused:
    /// that file fails with "cannot create", the others are copied, no temporary is left.
    @Test func refusedUnnamedFilesAndARefusedRenameLeaveNoTemporary() async throws {
        try await withScratchDirectory { scratch in
            try Self.makeTree(in: scratch)
            var files = SystemCalls.refusingUnnamedFiles
            let (rename, renameAt) = (files.rename, files.renameAt)
            let refuses: @Sendable (UnsafePointer<CChar>) -> Bool = { to in Pathname(String(cString: to)).lastComponent.description == "g" }
            files.rename = { from, to, flags in refuses(to) ? .failure(ErrorNumber(rawValue: EPERM)) : rename(from, to, flags) }
            files.renameAt = { fromDirectory, from, toDirectory, to, flags in
                refuses(to) ? .failure(ErrorNumber(rawValue: EPERM)) : renameAt(fromDirectory, from, toDirectory, to, flags)
            }
            let (report, failures) = try await Self.copy(in: scratch, system: files)
            #expect(failures == ["cannot create '\(scratch.appending("t/b/g"))': Operation not permitted"])
            #expect(report.files == 2)
            #expect(try readFile(scratch.appending("t/c/h")) == Array("h".utf8))
            try Self.expectNoTemporaries(under: scratch.appending("t"))
        }
    }
}
