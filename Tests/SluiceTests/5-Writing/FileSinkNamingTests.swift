import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Sluice
import SluiceTestSupport

/// How a sink names its file at the commit point (C41), through the system-call seam: an
/// unnamed `O_TMPFILE` file linked to a new name, linked under a temporary name and renamed
/// over an existing one; a replacement the kernel would refuse (append-only or immutable)
/// refused before anything is made; "create" for a new name, "replace" for an existing one;
/// nothing left behind by any refusal, and a name that could not be removed named.
@Suite(.timeLimit(.minutes(3)))
struct FileSinkNamingTests {
    static let options = FileSink.Options(synchronizes: false)
    static let replacesExisting = FileSink.Options(replacesExisting: true, synchronizes: false)

    /// The real calls with these changes, and a log of the `openat`/`open` flags of unnamed
    /// files, `linkat` targets and `renameat2` calls made.
    final class Calls: Sendable {
        let log = LockedValue<[String]>([])
        let system: SystemCalls

        init(
            flags: UInt32? = nil, flagsOnDirectories: Bool = true, flagsOnFiles: Bool = true, refusesUnnamed: Bool = false, link: ErrorNumber? = nil, rename: ErrorNumber? = nil, unlink: ErrorNumber? = nil
        ) {
            var system = refusesUnnamed ? SystemCalls.refusingUnnamedFiles : SystemCalls.live
            let log = log
            let (open, openAt) = (system.open, system.openAt)
            system.open = { path, flags, mode in
                if SystemCalls.asksForUnnamedFile(flags) { log.withLock { $0.append("O_TMPFILE") } }
                else if flags & O_CREAT != 0 { log.withLock { $0.append("O_CREAT") } }
                return open(path, flags, mode)
            }
            system.openAt = { directory, path, flags, mode in
                if SystemCalls.asksForUnnamedFile(flags) { log.withLock { $0.append("O_TMPFILE") } }
                else if flags & O_CREAT != 0 { log.withLock { $0.append("O_CREAT") } }
                return openAt(directory, path, flags, mode)
            }
            system.linkAt = { fromDirectory, from, toDirectory, to, linkFlags in
                let name = Pathname(String(cString: to)).lastComponent.description
                log.withLock { $0.append("link " + (name.hasPrefix(".sluice-") ? ".sluice-*" : name)) }
                if let link { return .failure(link) }
                return SystemCalls.liveLinkAt(fromDirectory, from, toDirectory, to, linkFlags)
            }
            let liveRename = system.rename
            system.rename = { from, to, renameFlags in
                log.withLock { $0.append("rename to " + Pathname(String(cString: to)).lastComponent.description) }
                if let rename { return .failure(rename) }
                return liveRename(from, to, renameFlags)
            }
            system.unlinkAt = { directory, path, unlinkFlags in
                if let unlink { return .failure(unlink) }
                return SystemCalls.liveUnlinkAt(directory, path, unlinkFlags)
            }
            if let flags {
                // The flags on the directory, on the file, or on both, told apart by fstat(2).
                system.inodeFlags = { descriptor in
                    var raw = stat()
                    let isDirectory = fstat(descriptor, &raw) == 0 && raw.st_mode & S_IFMT == S_IFDIR
                    return .success((isDirectory ? flagsOnDirectories : flagsOnFiles) ? flags : 0)
                }
            }
            self.system = system
        }

        var calls: [String] { log.withLock { $0 } }
    }

    /// A sink at `destination` through `calls`, given `data` and committed.
    static func copy(_ data: [UInt8], to destination: Pathname, options: FileSink.Options, calls: Calls) async throws {
        let sink = try await FileSink.create(at: FileLocation(path: destination), source: nil, options: options, system: calls.system)
        do {
            try await sink.write(Chunk(data))
            try await sink.commit()
        } catch {
            await sink.abort()
            throw error
        }
    }

    /// Expects the copy of `data` to `destination` to fail with `message`.
    static func expectRefusal(
        _ message: String, copying data: String, to destination: Pathname, options: FileSink.Options, calls: Calls
    ) async {
        await #expect {
            try await copy(Array(data.utf8), to: destination, options: options, calls: calls)
        } throws: { error in
            (error as? FileError)?.description == message
        }
    }

    @Test func aNewFileIsUnnamedUntilItIsLinkedToItsName() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("new")
            let calls = Calls()
            try await Self.copy(Array("data".utf8), to: destination, options: Self.options, calls: calls)
            #expect(calls.calls == ["O_TMPFILE", "link new"])
            #expect(try readFile(destination) == Array("data".utf8))
            #expect(try entries(in: directory.path) == ["new"])
        }
    }

    @Test func anExistingFileIsReplacedByALinkUnderATemporaryNameAndARename() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("old")
            try writeFile(destination, Array("OLD".utf8))
            let calls = Calls()
            try await Self.copy(Array("new".utf8), to: destination, options: Self.replacesExisting, calls: calls)
            #expect(calls.calls == ["O_TMPFILE", "link .sluice-*", "rename to old"])
            #expect(try readFile(destination) == Array("new".utf8))
            #expect(try entries(in: directory.path) == ["old"])
        }
    }

    @Test func aRefusedLinkSaysCreateAndLeavesNothing() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("new")
            let calls = Calls(link: ErrorNumber(rawValue: EPERM))
            await Self.expectRefusal("cannot create '\(destination)': Operation not permitted", copying: "data", to: destination, options: Self.options, calls: calls)
            let left = try entries(in: directory.path)
            #expect(left == [])
            #expect(openDescriptors(under: directory.path) == [])
        }
    }

    /// A `close(2)` of the unnamed file that fails once it is named (as a network file system
    /// reports a failed write-back): the commit fails with the close's error and the new name
    /// is removed again; no descriptor is left open.
    @Test func aFailedCloseAfterTheLinkFailsTheCommitAndRemovesTheNewName() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("new")
            let unnamed = LockedValue<CInt?>(nil)
            var system = SystemCalls.live
            let (open, openAt, close) = (system.open, system.openAt, system.close)
            let record: @Sendable (CInt, Result<CInt, ErrorNumber>) -> Void = { flags, result in
                if SystemCalls.asksForUnnamedFile(flags), case .success(let descriptor) = result { unnamed.withLock { $0 = descriptor } }
            }
            system.open = { path, flags, mode in
                let result = open(path, flags, mode)
                record(flags, result)
                return result
            }
            system.openAt = { directory, path, flags, mode in
                let result = openAt(directory, path, flags, mode)
                record(flags, result)
                return result
            }
            system.close = { descriptor in
                let result = close(descriptor)
                return unnamed.withLock({ $0 }) == descriptor ? .failure(ErrorNumber(rawValue: EIO)) : result
            }
            let sink = try await FileSink.create(at: FileLocation(path: destination), source: nil, options: Self.options, system: system)
            try await sink.write(Chunk(Array("data".utf8)))
            await #expect {
                try await sink.commit()
            } throws: { error in
                (error as? FileError)?.description == "cannot close '\(destination)': Input/output error"
            }
            #expect(try entries(in: directory.path) == [])
            #expect(openDescriptors(under: directory.path) == [])
        }
    }

    @Test func aRefusedRenameSaysReplaceRemovesItsTemporaryNameAndKeepsTheOldFile() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("old")
            try writeFile(destination, Array("OLD".utf8))
            let calls = Calls(rename: ErrorNumber(rawValue: EPERM))
            await Self.expectRefusal("cannot replace '\(destination)': Operation not permitted", copying: "new", to: destination, options: Self.replacesExisting, calls: calls)
            #expect(try entries(in: directory.path) == ["old"])
            #expect(try readFile(destination) == Array("OLD".utf8))
        }
    }

    @Test func aTemporaryNameThatCannotBeRemovedIsNamedInTheMessage() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("old")
            try writeFile(destination, Array("OLD".utf8))
            let calls = Calls(rename: ErrorNumber(rawValue: EPERM), unlink: ErrorNumber(rawValue: EPERM))
            var message = ""
            do {
                try await Self.copy(Array("new".utf8), to: destination, options: Self.replacesExisting, calls: calls)
            } catch {
                message = (error as? FileError)?.description ?? "\(error)"
            }
            let left = try temporaryFiles(in: directory.path)
            #expect(left.count == 1)
            #expect(message.hasPrefix("cannot replace '\(destination)': Operation not permitted; its temporary file '"))
            #expect(left.allSatisfy { message.contains("\(directory.appending($0))") }, "\(message)")
            for name in left { _ = directory.appending(name).withCString { unlink($0) } }
        }
    }

    @Test(arguments: [CSluiceShims_FS_APPEND_FL, CSluiceShims_FS_IMMUTABLE_FL], [true, false])
    func aReplacementTheKernelWouldRefuseIsRefusedBeforeAnythingIsMade(flag: UInt32, onTheDirectory: Bool) async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("old")
            try writeFile(destination, Array("OLD".utf8))
            let calls = Calls(flags: flag, flagsOnDirectories: onTheDirectory, flagsOnFiles: !onTheDirectory)
            await Self.expectRefusal("cannot replace '\(destination)': Operation not permitted", copying: "new", to: destination, options: Self.replacesExisting, calls: calls)
            #expect(calls.calls == [])  // no temporary file, unnamed or named, was made
            #expect(try readFile(destination) == Array("OLD".utf8))
            #expect(try entries(in: directory.path) == ["old"])
        }
    }

    @Test func withoutOTmpfileAnAppendOnlyDirectoryIsRefusedBeforeANamedTemporaryIsMade() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("new")
            let calls = Calls(flags: CSluiceShims_FS_APPEND_FL, refusesUnnamed: true)
            await Self.expectRefusal("cannot create '\(destination)': Operation not permitted", copying: "data", to: destination, options: Self.options, calls: calls)
            let left = try entries(in: directory.path)
            #expect(left == [])
        }
    }

    @Test func withoutOTmpfileANamedTemporaryIsRenamedIntoPlace() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("new")
            let calls = Calls(refusesUnnamed: true)
            try await Self.copy(Array("data".utf8), to: destination, options: Self.options, calls: calls)
            #expect(calls.calls == ["O_TMPFILE", "O_CREAT", "rename to new"])
            #expect(try entries(in: directory.path) == ["new"])
        }
    }

    @Test func aFileReadBackForVerificationIsReopenedThroughProc() async throws {
        try await withScratchDirectory { directory in
            let destination = directory.appending("new")
            let sink = try await FileSink.create(at: FileLocation(path: destination), source: nil, options: Self.options, system: .live)
            try await sink.write(Chunk(Array("data".utf8)))
            let reader = try #require(try await sink.openForReadBack())
            let bytes = try reader.closeAfter { () throws in try readAll(reader) }
            #expect(bytes == Array("data".utf8))
            try await sink.commit()
            #expect(try readFile(destination) == Array("data".utf8))
        }
    }
}
