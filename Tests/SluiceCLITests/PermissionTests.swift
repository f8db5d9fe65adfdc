#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// C30–C33: permissions never wider than `cp` makes them, `--rm` that keeps what gzip keeps, and
/// several operands that never overwrite each other's output. The checks that need another user
/// run `sluice` through `setpriv` as `nobody` (root only: CI runs as root).
@Suite(.timeLimit(.minutes(3)))
struct PermissionTests {
    static let isRoot = geteuid() == 0
    static let hasSetfacl = FileManager.default.isExecutableFile(atPath: "/usr/bin/setfacl")
    static let canSwitchUser = isRoot && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

    /// Runs `sluice` as `nobody`, from a copy in the sandbox (the build directory may be out of
    /// that user's reach).
    static let asNobody = #"cp "$SLUICE" ./sluice && setpriv --reuid=nobody --regid=nogroup --clear-groups ./sluice"#

    /// A sandbox that `nobody` can reach: its directory is world-searchable.
    static func sharedSandbox() throws -> Sandbox {
        let sandbox = try Sandbox()
        #expect(chmod(sandbox.root, 0o755) == 0)
        return sandbox
    }

    static func mode(_ sandbox: Sandbox, _ name: String) -> UInt32? {
        sandbox.status(name).map { UInt32($0.st_mode & 0o7777) }
    }

    /// Runs `script` in `sandbox` with `$SLUICE` set; `nobody` must be able to run the binary.
    static func shell(_ script: String, in sandbox: Sandbox) async throws -> CLIResult {
        try await CLI.shell(script, in: sandbox)
    }

    // MARK: C32: the kernel's creation rules

    @Test(.enabled(if: hasSetfacl, "setfacl is not installed (apt-get install acl)"))
    func aNewFileFollowsTheDirectorysDefaultACL() async throws {
        let sandbox = try Sandbox()
        let result = try await Self.shell(
            """
            mkdir acl && setfacl -d -m u::rwx,g::r-x,o::---,m::rwx acl || exit 77
            echo x > s && chmod 644 s && cp s acl/by-cp
            "$SLUICE" copy s acl/s && "$SLUICE" compress -o acl/s.gz s
            """, in: sandbox)
        try #require(result.status != 77, "this file system keeps no ACLs")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.mode(sandbox, "acl/by-cp") == 0o640)
        #expect(Self.mode(sandbox, "acl/s") == 0o640)
        #expect(Self.mode(sandbox, "acl/s.gz") == 0o640)
    }

    @Test func aNewFileFollowsTheUmask() async throws {
        let sandbox = try Sandbox()
        let result = try await Self.shell(
            #"echo x > s && chmod 755 s && umask 077 && "$SLUICE" copy s t && umask 027 && cat s | "$SLUICE" copy - u"#,
            in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.mode(sandbox, "t") == 0o700)
        #expect(Self.mode(sandbox, "u") == 0o640)  // standard input: 0666 & ~027
    }

    // MARK: --force keeps the replaced file's attributes

    @Test func forceKeepsTheReplacedFilesBitsUnlessPreserve() async throws {
        let sandbox = try Sandbox()
        let result = try await Self.shell(
            """
            echo new > s && chmod 644 s && echo old > d && chmod 600 d && ln d d-link
            echo old > e && chmod 600 e
            "$SLUICE" copy -f s d && "$SLUICE" copy -f --preserve s e
            """, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.text("d") == "new\n")
        #expect(Self.mode(sandbox, "d") == 0o600)
        #expect(Self.mode(sandbox, "e") == 0o644)
        // The replacement is a new inode: another hard link to the old file keeps the old bytes.
        #expect(sandbox.text("d-link") == "old\n")
    }

    @Test(.enabled(if: canSwitchUser && hasSetfacl, "needs root, setpriv and setfacl"))
    func forceKeepsTheReplacedFilesOwnerAndACL() async throws {
        let sandbox = try Self.sharedSandbox()
        let result = try await Self.shell(
            """
            echo new > s && echo old > d && chown nobody:nogroup d && chmod 640 d
            setfacl -m u:daemon:r d || exit 77
            "$SLUICE" copy -f s d && getfacl -cp d > acl.txt
            """, in: sandbox)
        try #require(result.status != 77, "this file system keeps no ACLs")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.text("d") == "new\n")
        let status = try #require(sandbox.status("d"))
        #expect(status.st_uid == 65534 && status.st_gid == 65534)
        #expect(sandbox.text("acl.txt")?.contains("user:daemon:r--") == true, "\(sandbox.text("acl.txt") ?? "")")
    }

    // MARK: C31: set-ID bits only with their owner

    @Test(.enabled(if: canSwitchUser, "needs root and setpriv to copy as another user"))
    func preserveDropsSetIDBitsWhenTheOwnerIsNotKept() async throws {
        let sandbox = try Self.sharedSandbox()
        let result = try await Self.shell(
            """
            printf 'prog' > prog && chmod 4755 prog && mkdir w && chmod 777 w
            \(Self.asNobody) copy --preserve prog w/prog || exit 1
            setpriv --reuid=nobody --regid=nogroup --clear-groups cp -p prog w/by-cp
            """, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        let copy = try #require(sandbox.status("w/prog"))
        #expect(copy.st_uid == 65534)
        #expect(copy.st_mode & 0o7777 == 0o755)
        #expect(sandbox.status("w/by-cp").map { $0.st_mode & 0o7777 } == 0o755)
    }

    @Test func preserveKeepsSetIDBitsWithTheOwnerAndCompressNeverMakesASetIDFile() async throws {
        let sandbox = try Sandbox()
        let result = try await Self.shell(
            """
            printf 'prog' > prog && chmod 4755 prog
            "$SLUICE" copy --preserve prog kept && "$SLUICE" copy prog plain
            "$SLUICE" compress --preserve -o prog.gz prog && "$SLUICE" compress -o plain.gz prog
            """, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.mode(sandbox, "kept") == 0o4755)  // same owner: kept, as cp -p
        #expect(Self.mode(sandbox, "plain")! & 0o6000 == 0)
        #expect(Self.mode(sandbox, "prog.gz") == 0o755)
        #expect(Self.mode(sandbox, "plain.gz")! & 0o6000 == 0)
    }

    // MARK: C33 and C30: what --rm keeps

    @Test func rmKeepsASourceWithOtherHardLinksUnlessForced() async throws {
        let sandbox = try Sandbox()
        let result = try await Self.shell(#"seq 1000 > a && ln a a2 && "$SLUICE" compress --rm a"#, in: sandbox)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("kept 'a': it has 1 other hard link"), "\(result.stderr)")
        #expect(sandbox.exists("a") && sandbox.exists("a.gz"))
        let forced = try await Self.shell(#"rm a.gz && "$SLUICE" compress --rm -f a"#, in: sandbox)
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(!sandbox.exists("a") && sandbox.exists("a.gz") && sandbox.exists("a2"))
    }

    @Test func rmKeepsASetIDOrStickySourceUnlessForced() async throws {
        let sandbox = try Sandbox()
        let result = try await Self.shell(
            #"seq 10 > s && chmod 2755 s && seq 10 > t && chmod 1644 t && "$SLUICE" compress --rm s t"#, in: sandbox)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("kept 's': it has the set-user-ID, set-group-ID or sticky bit"))
        #expect(result.stderr.contains("kept 't'"))
        #expect(sandbox.exists("s") && sandbox.exists("t") && sandbox.exists("s.gz") && sandbox.exists("t.gz"))
        #expect(Self.mode(sandbox, "s.gz") == 0o755)
    }

    @Test(.enabled(if: canSwitchUser, "needs root and setpriv: root may remove files from a read-only directory"))
    func aFailedRemovalAfterTheCommitIsAWarning() async throws {
        let sandbox = try Self.sharedSandbox()
        let result = try await Self.shell(
            """
            mkdir ro out && seq 1000 > ro/f && chown -R nobody:nogroup ro out && chmod 555 ro
            \(Self.asNobody) compress --rm -o out/f.gz ro/f
            """, in: sandbox)
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("kept 'ro/f': cannot remove it: Permission denied"), "\(result.stderr)")
        #expect(sandbox.exists("ro/f") && sandbox.exists("out/f.gz"))
    }

    /// C57 (f): a subdirectory its user may not read is made, empty, with its mode, and
    /// reported, as `cp -r` does (both exit 1); the rest of the tree is copied. Also when the
    /// tree's root is the unreadable directory.
    @Test(.enabled(if: canSwitchUser, "needs root and setpriv: root reads every directory"))
    func anUnreadableSubdirectoryIsMadeEmptyAndReported() async throws {
        let sandbox = try Self.sharedSandbox()
        let result = try await Self.shell(
            """
            mkdir -p src/a src/locked src/z && echo a > src/a/f && echo x > src/locked/g && echo z > src/z/f
            chown -R nobody:nogroup src && chmod 000 src/locked && chmod 777 .
            \(Self.asNobody) copy -r src dst; echo "status $?"
            setpriv --reuid=nobody --regid=nogroup --clear-groups ./sluice copy -r src/locked top; echo "status $?"
            setpriv --reuid=nobody --regid=nogroup --clear-groups cp -r src by-cp; echo "cp $?"
            """, in: sandbox)
        let statuses = result.stdoutText.split(separator: "\n").map(String.init)
        #expect(statuses == ["status 1", "status 1", "cp 1"], "\(result.stderr)")
        #expect(result.stderr.contains("'src/locked': Permission denied"), "\(result.stderr)")
        for tree in ["dst", "by-cp"] {
            #expect(sandbox.entries(tree + "/locked").isEmpty, "\(tree)")
            #expect(Self.mode(sandbox, tree + "/locked") == 0, "\(tree)")
            #expect(sandbox.contents(tree + "/a/f") == Array("a\n".utf8) && sandbox.contents(tree + "/z/f") == Array("z\n".utf8))
        }
        #expect(Self.mode(sandbox, "top") == 0)
    }

    @Test func aLaterOperandNeverOverwritesAFileThisRunCreated() async throws {
        let sandbox = try Sandbox()
        let result = try await Self.shell(
            #"mkdir a b dir && echo A > a/x && echo B > b/x && "$SLUICE" copy -f a/x b/x dir"#, in: sandbox)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("will not overwrite a file this run just created with 'b/x'"), "\(result.stderr)")
        #expect(sandbox.text("dir/x") == "A\n")
        #expect(sandbox.leftovers("dir").isEmpty)
        // An existing file from before the run is still replaced with -f.
        let again = try await Self.shell(#""$SLUICE" copy -f b/x dir"#, in: sandbox)
        #expect(again.status == 0 && sandbox.text("dir/x") == "B\n")
    }
}
