import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Sluice
import SluiceTestSupport
import Testing

/// Metadata through descriptors (issue 24, point 7): a regular file has every attribute the
/// copy gives it before it has its name, and no link or directory swapped into the source or
/// the destination during a tree copy redirects a `mkdir`, a `chmod`, an xattr or an ACL to a
/// file outside the copy (the class behind rsync 3.5.0's and uutils' symlink-race fixes). Each
/// swap is made at a fixed point of the copy (a call of the walk's or a file's open, through
/// the copier's system calls, or the seam before the final pass), so the order is the hostile
/// one every time.
@Suite(.timeLimit(.minutes(3)))
struct TreeCopyRaceTests {
    static let note = ExtendedAttributes([.init(name: Array("user.note".utf8), value: Array("kept".utf8))])

    /// The calls of a copier that runs `beforeOpening` with a source file's name just before
    /// the file is opened to be copied (read-only, not a directory): what a job sees there is
    /// what a change made before it started would be.
    static func calls(beforeOpening: @escaping @Sendable (String) -> Void) -> SystemCalls {
        var system = SystemCalls.live
        let open = system.openAt
        system.openAt = { directory, path, flags, mode in
            if flags & O_DIRECTORY == 0, flags & O_ACCMODE == O_RDONLY { beforeOpening(String(cString: path)) }
            return open(directory, path, flags, mode)
        }
        return system
    }

    /// Gives `name` in `directory` ``note``, or cancels the test (reported as skipped) where
    /// the file system keeps no `user.*` attributes.
    static func requireUserAttributes(on name: Pathname, in directory: DirectoryHandle) throws {
        let refused = note.write(to: name, in: directory)
        if let (_, error) = refused.first {
            try Test.cancel(Comment(rawValue: "this file system keeps no user.* attributes: \(error)"))
        }
    }

    /// The value of `user.note` at `path` (not following a link unless `following`), or `nil`.
    static func noteValue(at path: Pathname, following: Bool = false) -> String? {
        var value = [UInt8](repeating: 0, count: 64)
        let size = path.withCString { following ? getxattr($0, "user.note", &value, value.count) : lgetxattr($0, "user.note", &value, value.count) }
        return size < 0 ? nil : String(decoding: value[..<size], as: UTF8.self)
    }

    static func mode(of path: Pathname) throws -> UInt32 {
        try DirectoryHandle.open(path.directory).status(of: Pathname(path.lastComponent.description)).permissions
    }

    /// A tree copy with `-a`'s attributes, its failures' messages, and its report; `system`
    /// the copier's calls, `beforeFinalPass` run once every file completed.
    static func copyTree(
        _ source: Pathname, to target: Pathname, system: SystemCalls = .live, beforeFinalPass: (@Sendable () -> Void)? = nil
    ) async throws -> (Copier.TreeReport, [String]) {
        let copied = try await copyTreeWithCopier(
            source, to: target, options: .init(sink: .init(synchronizes: false, preservesAttributes: true)), system: system,
            beforeFinalPass: beforeFinalPass)
        return (copied.report, copied.failures)
    }

    /// At the instant a regular file gets its final name (the `linkat(2)` of an unnamed file,
    /// or the rename of a named temporary where `O_TMPFILE` is refused), it already has the
    /// source's extended attribute, bits and modification time.
    @Test(arguments: [false, true])
    func aFileHasItsAttributesBeforeItHasItsName(refusesUnnamed: Bool) async throws {
        try await withScratchDirectory { scratch in
            let handle = try DirectoryHandle.open(scratch.path)
            try writeFile(scratch.appending("source"), Array("data".utf8))
            try Self.requireUserAttributes(on: "source", in: handle)
            let old = FileTime(seconds: 1_234_567_890, nanoseconds: 0)
            try handle.setPermissions(of: "source", to: 0o640)
            try handle.setTimes(of: "source", access: old, modification: old)
            let seen = LockedValue<[String]>([])
            // What the file being named looks like at that instant (through the path the call names it by).
            // An unnamed file linked by its descriptor (`AT_EMPTY_PATH`) is looked at through /proc.
            let look: @Sendable (CInt, UnsafePointer<CChar>) -> Void = { descriptor, from in
                var raw = stat()
                let name = String(cString: from)
                let named = name.isEmpty ? "/proc/self/fd/\(descriptor)" : name
                let path = Pathname(named)
                guard stat(named, &raw) == 0 else { return }
                seen.withLock {
                    $0.append("\(Self.noteValue(at: path, following: true) ?? "none") \(String(raw.st_mode & 0o7777, radix: 8)) \(raw.st_mtim.tv_sec)")
                }
            }
            var system = refusesUnnamed ? SystemCalls.refusingUnnamedFiles : SystemCalls.live
            let (link, rename) = (system.linkAt, system.rename)
            system.linkAt = { fromDirectory, from, toDirectory, to, flags in
                look(fromDirectory, from)
                return link(fromDirectory, from, toDirectory, to, flags)
            }
            system.rename = { from, to, flags in
                look(CSluiceShims_AT_FDCWD, from)
                return rename(from, to, flags)
            }
            var options = FileSink.Options(synchronizes: false, preservesAttributes: true)
            options.preservesExtendedAttributes = true
            let chunks = try await FileChunks.open(scratch.appending("source"), chunkSize: 1 << 16)
            let sink = try await FileSink.create(
                at: FileLocation(path: scratch.appending("copy")), source: chunks.status, options: options, system: system)
            _ = try await RegularFileCopy(from: chunks, to: sink, options: .init()).run()
            #expect(seen.withLock { $0 } == ["kept 640 1234567890"])
            #expect(await sink.attributeRefusals.isEmpty)
            #expect(Self.noteValue(at: scratch.appending("copy")) == "kept")
        }
    }

    /// A destination directory renamed away and replaced by a link to a directory outside the
    /// copy, while its files are being copied: what is still to come is made in the directory
    /// the copy made (by its descriptor), never through the link; the final pass refuses the
    /// link (`O_NOFOLLOW`), so the outside directory keeps its bits, times and attributes.
    @Test func aDirectorySwappedForALinkDuringTheWalkRedirectsNothing() async throws {
        try await withScratchDirectory { scratch in
            let handle = try DirectoryHandle.open(scratch.path)
            try handle.makeDirectory("s", permissions: 0o755)
            try handle.makeDirectory("outside", permissions: 0o700)
            let tree = try handle.openDirectory("s")
            try tree.makeDirectory("a", permissions: 0o777)
            try writeFile(scratch.appending("s/a/first"), Array("1".utf8))
            try tree.openDirectory("a").makeDirectory("deeper", permissions: 0o755)
            try writeFile(scratch.appending("s/a/deeper/second"), Array("2".utf8))
            try Self.requireUserAttributes(on: "a", in: tree)
            let outsideBefore = try handle.status(of: "outside")
            let (t, outside) = (scratch.appending("t"), scratch.appending("outside"))
            let swapped = LockedValue(false)
            // On the walk's thread, just before it makes `a/deeper` in the copy: what is still
            // to come (that directory, and `second` in it) comes after the swap, every time.
            var system = SystemCalls.live
            let makeDirectory = system.makeDirectoryAt
            system.makeDirectoryAt = { directory, path, mode in
                if String(cString: path) == "deeper", !swapped.withLock({ $0 }) {
                    swapped.withLock { $0 = true }
                    _ = rename(t.appending("a").description, t.appending("moved").description)
                    _ = symlink(outside.description, t.appending("a").description)
                }
                return makeDirectory(directory, path, mode)
            }
            let (report, failures) = try await Self.copyTree(scratch.appending("s"), to: t, system: system)
            #expect(swapped.withLock { $0 })
            #expect(try entries(in: outside) == [])
            let outsideAfter = try handle.status(of: "outside")
            #expect(outsideAfter.permissions == 0o700)
            #expect(outsideAfter.modificationTime == outsideBefore.modificationTime)
            #expect(Self.noteValue(at: outside) == nil)
            // Everything went into the directory the copy made, now at `moved`.
            #expect(try readFile(t.appending("moved/first")) == Array("1".utf8))
            #expect(try readFile(t.appending("moved/deeper/second")) == Array("2".utf8))
            #expect(report.files == 2)
            #expect(failures.count == 1, "\(failures)")
            #expect(failures.first?.contains("'\(t.appending("a"))'") == true, "\(failures)")
        }
    }

    /// Once every file is copied, a destination directory replaced by another directory (or
    /// by a link to one): the final pass checks device and inode and gives its bits, times
    /// and attributes to neither; the rest of the tree gets its own.
    @Test(arguments: ["directory", "link"])
    func aDirectoryReplacedBeforeTheFinalPassKeepsItsOwnAttributes(by replacement: String) async throws {
        try await withScratchDirectory { scratch in
            let handle = try DirectoryHandle.open(scratch.path)
            try handle.makeDirectory("s", permissions: 0o755)
            try handle.makeDirectory("outside", permissions: 0o700)
            let tree = try handle.openDirectory("s")
            try tree.makeDirectory("a", permissions: 0o777)
            try tree.makeDirectory("b", permissions: 0o751)
            try writeFile(scratch.appending("s/a/f"), Array("f".utf8))
            try Self.requireUserAttributes(on: "a", in: tree)
            let old = FileTime(seconds: 1_000_000_000, nanoseconds: 0)
            try tree.setTimes(of: "b", access: old, modification: old)
            let (t, outside) = (scratch.appending("t"), scratch.appending("outside"))
            let (report, failures) = try await Self.copyTree(scratch.appending("s"), to: t, beforeFinalPass: {
                _ = rename(t.appending("a").description, t.appending("moved").description)
                if replacement == "directory" {
                    _ = mkdir(t.appending("a").description, 0o700)
                } else {
                    _ = symlink(outside.description, t.appending("a").description)
                }
            })
            let target = try DirectoryHandle.open(t)
            let replaced = replacement == "directory" ? t.appending("a") : outside
            #expect(try Self.mode(of: replaced) == 0o700)
            #expect(Self.noteValue(at: replaced) == nil)
            #expect(report.files == 1)
            #expect(failures.count == 1, "\(failures)")
            #expect(failures.first?.contains("'\(t.appending("a"))'") == true, "\(failures)")
            // Its sibling and the root still get theirs.
            #expect(try target.status(of: "b").permissions == 0o751)
            #expect(try target.status(of: "b").modificationTime == old)
        }
    }

    /// A source file swapped for a link to a file outside the tree after the walk saw it: the
    /// copy opens it with `O_NOFOLLOW` and fails that one file; the outside file's bytes are
    /// not copied and nothing is left at its destination.
    @Test func aSourceFileSwappedForALinkIsNotFollowed() async throws {
        try await withScratchDirectory { scratch in
            let handle = try DirectoryHandle.open(scratch.path)
            try handle.makeDirectory("s", permissions: 0o755)
            try writeFile(scratch.appending("secret"), Array("SECRET".utf8))
            try writeFile(scratch.appending("s/f"), Array("plain".utf8))
            try writeFile(scratch.appending("s/g"), Array("other".utf8))
            let (s, secret) = (scratch.appending("s"), scratch.appending("secret"))
            let swapped = LockedValue(false)
            let system = Self.calls(beforeOpening: { name in
                guard name == "f", !swapped.withLock({ $0 }) else { return }
                swapped.withLock { $0 = true }
                _ = unlink(s.appending("f").description)
                _ = symlink(secret.description, s.appending("f").description)
            })
            let (report, failures) = try await Self.copyTree(s, to: scratch.appending("t"), system: system)
            #expect(report.files == 1)
            #expect(failures.count == 1, "\(failures)")
            #expect(try entries(in: scratch.appending("t")) == ["g"])
        }
    }

    /// The calls that set a node's or a directory entry's attributes never follow a link put
    /// in its place: bits (`fchmodat2(2)` `AT_SYMLINK_NOFOLLOW`), times, owner and xattrs.
    @Test func attributesByNameNeverFollowALink() async throws {
        try await withScratchDirectory { scratch in
            let handle = try DirectoryHandle.open(scratch.path)
            try writeFile(scratch.appending("target"), Array("t".utf8))
            try handle.setPermissions(of: "target", to: 0o600)
            try handle.makeSymbolicLink("link", target: "target")
            let before = try handle.status(of: "target")
            #expect(throws: FileError.self) { try handle.setPermissions(of: "link", to: 0o777) }
            try handle.setTimes(of: "link", access: .init(seconds: 1, nanoseconds: 0), modification: .init(seconds: 1, nanoseconds: 0))
            _ = Self.note.write(to: "link", in: handle)
            let after = try handle.status(of: "target")
            #expect(after.permissions == 0o600)
            #expect(after.modificationTime == before.modificationTime)
            #expect(Self.noteValue(at: scratch.appending("target")) == nil)
        }
    }
}
