#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Sluice
import SluiceTestSupport
import Testing

/// `sluice copy -r` and `-a`: cp's meanings for trees, names as bytes, depth beyond `PATH_MAX`,
/// failures named and the rest copied, and `-a` equal to `cp -a` entry by entry.
@Suite(.timeLimit(.minutes(3)))
struct TreeCopyTests {
    static let isRoot = geteuid() == 0
    static let canSwitchUser = isRoot && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

    /// The repository's `benchmarks` directory (the tree generator and comparison are shared
    /// with `benchmarks/tree-copy.sh`).
    static let benchmarks: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("benchmarks").path

    static func mode(_ sandbox: Sandbox, _ name: String) -> UInt32? {
        sandbox.status(name).map { UInt32($0.st_mode & 0o7777) }
    }

    /// A temporary file an interrupted run left in the source (`.sluice-<12>.tmp`, a spill
    /// file's too) is never copied, and said; names that only look alike are copied.
    @Test func temporaryFilesOfAnInterruptedRunAreNotCopied() async throws {
        let sandbox = try Sandbox()
        try sandbox.makeDirectory("s")
        try sandbox.makeDirectory("s/d")
        try sandbox.write("partial", to: "s/.sluice-0a1b2c3d4e5f.tmp")
        try sandbox.write("spilled", to: "s/d/.sluice-spill-zz9y8x7w6v5u.tmp")
        for name in [".sluice-short.tmp", ".sluice-0A1B2C3D4E5F.tmp", "sluice-0a1b2c3d4e5f.tmp", "data"] {
            try sandbox.write(name, to: "s/d/" + name)
        }
        let result = try await CLI.run(["copy", "-r", "s", "t"], in: sandbox)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("passed over 2 files such as"), "\(result.stderr)")
        #expect(!sandbox.exists("t/.sluice-0a1b2c3d4e5f.tmp") && !sandbox.exists("t/d/.sluice-spill-zz9y8x7w6v5u.tmp"))
        for name in [".sluice-short.tmp", ".sluice-0A1B2C3D4E5F.tmp", "sluice-0a1b2c3d4e5f.tmp", "data"] {
            #expect(sandbox.text("t/d/" + name) == name)
        }
        // Nothing removes them either: a run still under way may own them.
        #expect(sandbox.text("s/.sluice-0a1b2c3d4e5f.tmp") == "partial")
        let compressed = try await CLI.run(["compress", "-r", "s"], in: sandbox)
        #expect(compressed.status == 0, "\(compressed.stderr)")
        #expect(!sandbox.exists("s/.sluice-0a1b2c3d4e5f.tmp.gz") && sandbox.exists("s/d/data.gz"))
    }

    @Test func aDirectoryIsCopiedAsTheDestinationOrIntoAnExistingOne() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(
            """
            mkdir -p s/sub && echo one > s/a && echo two > s/sub/b && mkdir into
            "$SLUICE" copy -r s new && "$SLUICE" copy -R s into && "$SLUICE" copy --recursive s/ into/again
            """, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.text("new/a") == "one\n")
        #expect(sandbox.text("new/sub/b") == "two\n")
        #expect(sandbox.text("into/s/sub/b") == "two\n")
        #expect(sandbox.text("into/again/a") == "one\n")
        #expect(sandbox.leftovers("new") == [])
    }

    @Test func withoutPreserveModesFollowTheUmaskAndLinksStayLinks() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(
            """
            mkdir -p s/d && echo x > s/f && chmod 777 s/f s/d && ln -s f s/link && ln -s missing s/dangling
            ln s/f s/hard && umask 027 && "$SLUICE" copy -r s t
            """, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.mode(sandbox, "t/f") == 0o750)
        #expect(Self.mode(sandbox, "t/d") == 0o750)
        #expect(sandbox.status("t/link").map { $0.st_mode & S_IFMT } == S_IFLNK)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: sandbox.path("t/dangling"))) == "missing")
        // -r makes each name a file of its own.
        #expect(sandbox.status("t/hard")?.st_ino != sandbox.status("t/f")?.st_ino)
    }

    @Test func archiveKeepsHardLinksTimesAndModes() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(
            """
            mkdir -p s/d && echo x > s/f && ln s/f s/d/hard && chmod 640 s/f && chmod 711 s/d
            touch -d '2012-03-04 05:06:07.123456789' s/f && touch -h -d '2013-01-01 00:00:00.5' s/d
            "$SLUICE" copy -a s t
            """, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        let file = try #require(sandbox.status("t/f"))
        #expect(sandbox.status("t/d/hard")?.st_ino == file.st_ino)
        #expect(file.st_nlink == 2)
        #expect(file.st_mode & 0o7777 == 0o640)
        #expect(file.st_mtim.tv_nsec == 123_456_789)
        let directory = try #require(sandbox.status("t/d"))
        #expect(directory.st_mode & 0o7777 == 0o711)
        #expect(directory.st_mtim.tv_nsec == 500_000_000)
    }

    /// A hard link is made only to a first name that was copied: never to an old file that
    /// happens to be at that name.
    @Test func aHardLinkIsNeverMadeToAFileThatWasNotCopied() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(
            """
            mkdir -p s t/s && echo new > s/a && ln s/a s/b && echo old > t/s/a
            "$SLUICE" copy -a s t
            """, in: sandbox)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(sandbox.text("t/s/a") == "old\n")
        // Whichever name came first: b is absent, or a copy of the source; never the old a.
        #expect(sandbox.text("t/s/b") == nil || sandbox.text("t/s/b") == "new\n", "\(result.stderr)")
        #expect(sandbox.status("t/s/b")?.st_ino != sandbox.status("t/s/a")?.st_ino)
    }

    /// `--force` replaces links, FIFOs and hard links already there, as `cp -a -f` does.
    @Test func forceCopiesOverAnEarlierCopy() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(
            """
            mkdir -p s/d t && echo x > s/f && ln s/f s/d/hard && ln -s f s/link && mkfifo s/fifo
            "$SLUICE" copy -a s t && echo y > s/f && "$SLUICE" copy -a --force s t
            """, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.text("t/s/f") == "y\n")
        #expect(sandbox.status("t/s/d/hard")?.st_ino == sandbox.status("t/s/f")?.st_ino)
        #expect(sandbox.leftovers("t/s").isEmpty)
    }

    @Test func namesAreBytesUpTo255() async throws {
        let sandbox = try Sandbox()
        let long = String(repeating: "n", count: 255)
        let result = try await CLI.shell(
            #"mkdir s && printf a > "s/$(printf 'caf\351')" && mkdir "s/$(printf '\377d')" && printf b > "s/$(printf '\377d')/\#(long)" && "$SLUICE" copy -r s t"#,
            in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.contents(bytes: Array("t/caf".utf8) + [0xE9]) == Array("a".utf8))
        #expect(sandbox.contents(bytes: Array("t/".utf8) + [0xFF] + Array("d/\(long)".utf8)) == Array("b".utf8))
    }

    /// 60 levels of 100-byte names: a path of 6,060 bytes, beyond PATH_MAX (4,096), copied with
    /// at most 256 descriptors.
    @Test func aTreeDeeperThanPathMaxCopiesUnderALowDescriptorLimit() async throws {
        let sandbox = try Sandbox()
        let name = Pathname(String(repeating: "a", count: 100))
        // A shell cannot cd that deep: the tree is made and read through directory descriptors.
        try sandbox.makeDirectory("s")
        var directory = try DirectoryHandle.open(Pathname(sandbox.path("s")))
        for _ in 0..<60 {
            try directory.makeDirectory(name, permissions: 0o755)
            directory = try directory.openDirectory(name)
        }
        let file = try directory.openFile("f", O_WRONLY | O_CREAT, permissions: 0o644)
        try file.closeAfter { () throws in try Array("deep".utf8).withUnsafeBytes { try file.write(contentsOf: $0) } }
        let result = try await CLI.shell(#"/bin/sh -c 'ulimit -n 256; exec "$SLUICE" copy -a s t'"#, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        var copy = try DirectoryHandle.open(Pathname(sandbox.path("t")))
        for _ in 0..<60 { copy = try copy.openDirectory(name) }
        #expect(copy.path.bytes.count > 4096)
        let reading = try copy.openFile("f", O_RDONLY)
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = try reading.closeAfter { () throws in try bytes.withUnsafeMutableBytes { try reading.readFully(into: $0) } }
        #expect(Array(bytes[..<count]) == Array("deep".utf8))
        _ = try await CLI.shell("rm -rf s t", in: sandbox)
    }

    @Test func specialFilesAreRecreatedNotRead() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(
            "mkdir s && mkfifo s/fifo && chmod 640 s/fifo && \"$SLUICE\" copy -a s t", in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.status("t/fifo").map { $0.st_mode & S_IFMT } == S_IFIFO)
        #expect(Self.mode(sandbox, "t/fifo") == 0o640)
    }

    @Test(.enabled(if: isRoot, "device nodes can be made by root only"))
    func aDeviceNodeIsRecreated() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell("mkdir s && mknod s/null c 1 3 && \"$SLUICE\" copy -r s t", in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        let status = try #require(sandbox.status("t/null"))
        #expect(status.st_mode & S_IFMT == S_IFCHR)
        var null = stat()
        #expect(stat("/dev/null", &null) == 0)
        #expect(status.st_rdev == null.st_rdev)
    }

    @Test func followingLinksWithHAndL() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(
            """
            mkdir real && echo x > real/f && ln -s f real/link && ln -s real top
            "$SLUICE" copy -r top as-link && "$SLUICE" copy -r -H top followed && "$SLUICE" copy -r -L top all
            """, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.status("as-link").map { $0.st_mode & S_IFMT } == S_IFLNK)
        #expect(sandbox.status("followed").map { $0.st_mode & S_IFMT } == S_IFDIR)
        #expect(sandbox.status("followed/link").map { $0.st_mode & S_IFMT } == S_IFLNK)
        #expect(sandbox.status("all/link").map { $0.st_mode & S_IFMT } == S_IFREG)
    }

    @Test func aDirectoryIsNeverCopiedIntoItself() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(
            "mkdir -p s/sub && echo x > s/f && \"$SLUICE\" copy -r s s/sub; echo $? > status; \"$SLUICE\" copy -r s s",
            in: sandbox)
        #expect(sandbox.text("status") == "1\n")
        #expect(result.status == 1)
        #expect(result.stderr.contains("into itself"), "\(result.stderr)")
        #expect(sandbox.listing("s/sub") == [])
        #expect(!sandbox.exists("s/s"))
    }

    /// A bind mount makes a tree a graph. `d` mounted at `s/a/m`, then `copy -r s d/`: `s/a/m`
    /// is the destination's parent, refused as a copy into itself; `s` mounted at `s/a/back`,
    /// then `copy -r s e`: a cycle. Each ends at once (a `timeout` guards against a copy
    /// without end) with exit 1, the entry named, and the rest of the tree copied. The mounts
    /// live in a mount namespace of their own (`unshare -m`), gone when it ends.
    @Test func aBindMountBackIntoTheCopyIsRefused() async throws {
        let sandbox = try Sandbox()
        let probe = try await CLI.shell("mkdir probe && unshare -m mount --bind probe probe 2>&1", in: sandbox)
        if probe.status != 0 {
            try Test.cancel(Comment(rawValue: "unshare -m and mount --bind are not permitted here: \(probe.stdoutText)"))
        }
        let result = try await CLI.shell(
            """
            mkdir -p s/a/m s/a/back d && echo one > s/a/f && echo two > s/z
            unshare -m sh -c '
                mount --bind d s/a/m || exit 3
                timeout 20 "$SLUICE" copy -r s d/ 2> into.err; echo $? > into.status
                umount s/a/m && mount --bind s s/a/back || exit 3
                timeout 20 "$SLUICE" copy -r s e 2> cycle.err; echo $? > cycle.status'
            """, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        let into = sandbox.text("into.err") ?? ""
        #expect(sandbox.text("into.status") == "1\n", "\(into)")
        #expect(into.contains("cannot copy a directory, 's/a/m', into itself, 'd'"), "\(into)")
        #expect(sandbox.text("d/s/a/f") == "one\n")
        #expect(sandbox.text("d/s/z") == "two\n")
        #expect(!sandbox.exists("d/s/a/m"))
        let cycle = sandbox.text("cycle.err") ?? ""
        #expect(sandbox.text("cycle.status") == "1\n", "\(cycle)")
        #expect(cycle.contains("'s/a/back': directory cycle: it is 's', which contains it"), "\(cycle)")
        #expect(sandbox.text("e/a/f") == "one\n")
        #expect(sandbox.text("e/z") == "two\n")
        #expect(sandbox.listing("e/a/back") == [])
    }

    /// SIGINT while a file of the tree is being written (its unnamed temporary file seen open in
    /// the destination): exit 130, no temporary file left, the directories made stay.
    @Test func anInterruptedTreeCopyLeavesNoTemporaryFile() async throws {
        let sandbox = try Sandbox()
        try sandbox.makeDirectory("s")
        try sandbox.write([UInt8](repeating: 7, count: 16 << 20), to: "s/big")
        // 16 MiB at 64 KiB/s: minutes, far more than the test needs to see the file in flight.
        let process = try CLI.start(["copy", "-r", "--limit-rate", "64K", "--chunk-size", "64K", "s", "t"], in: sandbox)
        // The event: the file's temporary file is open, so the copy is in flight.
        var polls = 0
        while sandbox.unnamedFiles(openBy: process.pid, in: "t").isEmpty && sandbox.leftovers("t").isEmpty {
            polls += 1
            // A copy that ended (or failed) before its file was in flight is a failure, not a hang.
            if sandbox.exists("t/big") || polls > 12_000 {
                Issue.record("the copy was never seen in flight")
                break
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        process.send(signal: SIGINT)
        let result = await process.finish()
        #expect(result.status == 130, "\(result.stderr)")
        #expect(sandbox.leftovers("t") == [])
        #expect(!sandbox.exists("t/big"))
    }

    @Test func usageErrors() async throws {
        let sandbox = try Sandbox()
        try sandbox.write("x", to: "f")
        for arguments in [["copy", "-r", "-", "d"], ["copy", "-r", "f", "-"], ["copy", "-L", "f", "g"]] {
            let result = try await CLI.run(arguments, in: sandbox)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
        }
        let help = try await CLI.run(["copy", "--help"], in: sandbox)
        #expect(help.stdoutText.contains("-r, -R, --recursive"))
        #expect(help.stdoutText.contains("-a, --archive"))
    }

    /// Run as `nobody` (CI runs as root, which every permission lets through): an unreadable
    /// file and an unreadable directory are named, everything else is copied, exit 1; a
    /// read-only directory is copied with its contents and stays read-only.
    @Test(.enabled(if: canSwitchUser, "needs root and setpriv to copy as another user"))
    func failuresAreNamedAndTheRestIsCopied() async throws {
        let sandbox = try Sandbox()
        #expect(chmod(sandbox.root, 0o777) == 0)
        let result = try await CLI.shell(
            """
            mkdir -p s/a s/closed s/ro && echo 1 > s/a/one && echo 2 > s/secret && echo 3 > s/z && echo 4 > s/ro/in
            chmod 000 s/secret s/closed && chmod 555 s/ro && chmod -R a+rX s/a s/z s/ro
            cp "$SLUICE" ./sluice && setpriv --reuid=nobody --regid=nogroup --clear-groups ./sluice copy -r s t
            echo $? > status; chmod -R u+w t 2>/dev/null; true
            """, in: sandbox)
        #expect(sandbox.text("status") == "1\n", "\(result.stderr)")
        #expect(result.stderr.contains("s/secret"), "\(result.stderr)")
        #expect(result.stderr.contains("s/closed"), "\(result.stderr)")
        #expect(sandbox.text("t/a/one") == "1\n")
        #expect(sandbox.text("t/z") == "3\n")
        #expect(sandbox.text("t/ro/in") == "4\n")
        #expect(!sandbox.exists("t/secret"))
    }

    @Test(.enabled(if: !isRoot || canSwitchUser, "needs setpriv to copy as another user"))
    func aReadOnlyDirectoryIsCopiedAndStaysReadOnly() async throws {
        let sandbox = try Sandbox()
        #expect(chmod(sandbox.root, 0o777) == 0)
        let run = Self.isRoot
            ? #"cp "$SLUICE" ./sluice && setpriv --reuid=nobody --regid=nogroup --clear-groups ./sluice"# : #""$SLUICE""#
        let result = try await CLI.shell(
            """
            mkdir -p s/ro/deeper && echo x > s/ro/deeper/f && chmod 555 s/ro/deeper s/ro && chmod -R a+rX s
            \(run) copy -a s t; echo $? > status; chmod -R u+w s t 2>/dev/null; true
            """, in: sandbox)
        #expect(sandbox.text("status") == "0\n", "\(result.stderr)")
        #expect(sandbox.text("t/ro/deeper/f") == "x\n")
    }

    /// The goal tree (2,000 files, 20 levels, links, a hard link, a FIFO, names that are not
    /// UTF-8, a read-only directory, another owner as root, xattrs and ACLs where possible):
    /// `sluice copy -a` equals `cp -a` by find listing, getfattr, getfacl and cmp.
    @Test func archiveEqualsCpArchiveEntryByEntry() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(
            """
            sh "\(Self.benchmarks)/tree-gen.sh" tree 2000 16 || exit 3
            cp -a tree by-cp || exit 4
            "$SLUICE" copy -a --no-fsync tree by-sluice; echo $? > status
            sh "\(Self.benchmarks)/tree-compare.sh" by-cp by-sluice
            """, in: sandbox)
        #expect(sandbox.text("status") == "0\n", "\(result.stderr)")
        #expect(result.status == 0, "\(result.stdoutText)\(result.stderr)")
        #expect(!result.stdoutText.contains("differ"), "\(result.stdoutText)")
    }
}
