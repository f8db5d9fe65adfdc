#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// Round three, trees and destinations reached by unusual routes: an append-only or immutable
/// directory (C41), a symbolic link operand with a trailing slash (C42), a destination that is
/// one of the process's own descriptors (C43), and the hints `cp` users expect.
@Suite(.timeLimit(.minutes(4)))
struct UnusualRouteTests {
    /// Runs `script` in a new sandbox whose `chattr` flags the script's trap clears on every
    /// exit; cancels the test (skipped, with the reason) where `chattr +a` is refused (not root,
    /// or a file system without inode flags).
    static func withInodeFlags(_ script: String) async throws -> (Sandbox, CLIResult) {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(
            """
            trap 'chattr -R -a -i . 2>/dev/null' EXIT
            mkdir probe && chattr +a probe 2>/dev/null || { echo refused > skipped; exit 0; }
            chattr -a probe && rmdir probe
            \(script)
            """, in: sandbox)
        if sandbox.exists("skipped") { try Test.cancel("chattr +a is refused here (needs root and ext4, XFS or Btrfs)") }
        return (sandbox, result)
    }

    /// C41: in an append-only directory a new file is created complete, as `cp` creates it; a
    /// replacement there is refused before anything is made, the old file intact.
    @Test func anAppendOnlyDirectoryTakesNewFilesAndRefusesReplacementsLeavingNothing() async throws {
        let (sandbox, result) = try await Self.withInodeFlags(
            """
            echo new > src; head -c 5242880 /dev/urandom > big; mkdir adir; echo old > adir/z; chattr +a adir
            "$SLUICE" copy src adir/x 2>> err; echo $? >> status
            "$SLUICE" copy big adir/big 2>> err; echo $? >> status
            "$SLUICE" copy -f src adir/z 2>> err; echo $? >> status
            "$SLUICE" copy --no-fsync -r adir copy 2>> err; echo $? >> status
            ls -A adir > listing
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.text("status") == "0\n0\n1\n0\n", "\(sandbox.text("err") ?? "")")
        #expect(sandbox.text("listing") == "big\nx\nz\n")
        #expect(sandbox.text("adir/x") == "new\n")
        #expect(sandbox.text("adir/z") == "old\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: sandbox.path("adir/big"))) == Data(contentsOf: URL(fileURLWithPath: sandbox.path("big"))))
        #expect(sandbox.text("err") == "sluice: cannot replace 'adir/z': Operation not permitted\n")
    }

    /// C41: an immutable file or directory refuses, with "replace" only for a name that exists,
    /// and nothing is left.
    @Test func immutableFilesAndDirectoriesAreRefusedWithNothingLeft() async throws {
        let (sandbox, result) = try await Self.withInodeFlags(
            """
            echo new > src; mkdir d i; echo old > d/z; chattr +i d/z i
            "$SLUICE" copy -f src d/z 2>> err; echo $? >> status
            "$SLUICE" copy src i/x 2>> err; echo $? >> status
            "$SLUICE" copy -f src i/x 2>> err; echo $? >> status
            ls -A d i > listing
            """)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.text("status") == "1\n1\n1\n")
        #expect(sandbox.text("d/z") == "old\n")
        #expect(sandbox.text("listing") == "d:\nz\n\ni:\n")
        #expect(sandbox.text("err") == """
            sluice: cannot replace 'd/z': Operation not permitted
            sluice: cannot create 'i/x': Operation not permitted
            sluice: cannot create 'i/x': Operation not permitted

            """)
    }

    /// C42: `link/` is the directory the link leads to, as `cp -r link/ x` and `rsync -r link/ x`
    /// make it; `link` without the slash is copied as a link.
    @Test func aTrailingSlashResolvesASymbolicLinkOperand() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(
            """
            mkdir -p real/sub && echo data > real/sub/f && echo top > real/t && ln -s real link && mkdir sd
            "$SLUICE" copy -r link/ s1 && "$SLUICE" copy -a link/ s2 && "$SLUICE" copy -r link/ sd/ && "$SLUICE" copy -r link s3
            """, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        for copy in ["s1", "s2", "sd/link"] {
            #expect(sandbox.status(copy).map { $0.st_mode & S_IFMT } == S_IFDIR, "\(copy)")
            #expect(sandbox.text(copy + "/sub/f") == "data\n", "\(copy)")
            #expect(sandbox.text(copy + "/t") == "top\n", "\(copy)")
        }
        #expect(sandbox.status("s3").map { $0.st_mode & S_IFMT } == S_IFLNK)
    }

    /// C43: a destination that names one of the process's own descriptors (through a link, or
    /// `/dev/stderr`, `/dev/fd/N`) is written to that descriptor, as `-` is: no `--force`, no
    /// truncation, no rename.
    @Test func aDestinationNamingAnInheritedDescriptorIsWrittenThroughIt() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(
            """
            echo hello > t; ln -s /dev/stdout xaa; echo before > three
            "$SLUICE" copy t xaa > out1; echo $? >> status
            "$SLUICE" copy t /dev/stderr 2> err; echo $? >> status
            "$SLUICE" copy -f t /dev/fd/3 3>> three; echo $? >> status
            "$SLUICE" copy t /proc/self/fd/1 > out2; echo $? >> status
            """, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.text("status") == "0\n0\n0\n0\n")
        #expect(sandbox.text("out1") == "hello\n")
        #expect(sandbox.text("err") == "hello\n")
        #expect(sandbox.text("three") == "before\nhello\n")
        #expect(sandbox.text("out2") == "hello\n")
        #expect(sandbox.status("xaa").map { $0.st_mode & S_IFMT } == S_IFLNK)
    }

    /// C43, as root: in a mount namespace whose `/dev` is a tmpfs with `stderr ->
    /// /proc/self/fd/2`, `copy -f t /dev/stderr` writes through the link and never replaces it;
    /// a regular file on `/dev`'s file system is never renamed over either.
    @Test func aLinkUnderDevIsNeverReplaced() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(
            """
            echo hello > t
            unshare -m sh -c 'mount -t tmpfs none /dev && ln -s /proc/self/fd/2 /dev/stderr' 2>/dev/null || { echo refused > skipped; exit 0; }
            unshare -m sh -c '
              mount -t tmpfs none /dev && ln -s /proc/self/fd/2 /dev/stderr && echo old > /dev/plain
              "$SLUICE" copy -f t /dev/stderr 2> err; echo $? >> status
              "$SLUICE" copy -f t /dev/plain 2> err2; echo $? >> status
              test -L /dev/stderr && echo link >> status; cat /dev/plain >> status'
            """, in: sandbox)
        if sandbox.exists("skipped") { try Test.cancel("unshare -m and mount are refused here (needs root)") }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.text("err") == "hello\n")
        #expect(sandbox.text("status") == "0\n1\nlink\nold\n")
        #expect(sandbox.text("err2")?.contains("cannot replace '/dev/plain'") == true, "\(sandbox.text("err2") ?? "")")
    }

    /// A directory operand without `-r`: cp's words, exit 1, the other operands copied.
    @Test func aDirectoryWithoutRecursiveIsOmittedWithCpsWords() async throws {
        let sandbox = try Sandbox()
        try sandbox.makeDirectory("d")
        try sandbox.makeDirectory("into")
        try sandbox.write("f\n", to: "f")
        let alone = try await CLI.run(["copy", "d", "e"], in: sandbox)
        #expect(alone.status == 1)
        #expect(alone.stderr == "sluice: -r not specified; omitting directory 'd'\n")
        #expect(!sandbox.exists("e"))
        let several = try await CLI.run(["copy", "f", "d", "into"], in: sandbox)
        #expect(several.status == 1)
        #expect(several.stderr == "sluice: -r not specified; omitting directory 'd'\n")
        #expect(sandbox.text("into/f") == "f\n")
        #expect(sandbox.listing("into") == ["f"])
    }

    /// A tree merged onto existing files names the option that overrides the refusal, as one
    /// file does.
    @Test func aTreeMergedOntoExistingFilesNamesForce() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(
            "mkdir -p s t/s && echo a > s/f && echo b > t/s/f && \"$SLUICE\" copy -r s t", in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot create 't/s/f': File exists (use --force to overwrite)"), "\(result.stderr)")
        #expect(sandbox.text("t/s/f") == "b\n")
    }
}

/// `--preserve` means exactly the source's permissions (mode and ACLs), and without it the
/// creation rule (default ACL, else umask) stays: the matrix of files (with and without an
/// access ACL) and directories (with an access ACL, with a default ACL), each into a directory
/// with and without a default ACL, with `-p`/`-a` and without, entry by entry as `getfacl` shows
/// `cp`'s copies.
@Suite(.timeLimit(.minutes(4)))
struct PreservedACLTests {
    @Test func theACLMatrixEqualsCps() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(
            """
            command -v setfacl >/dev/null && command -v getfacl >/dev/null || { echo "setfacl is not installed" > skipped; exit 0; }
            mkdir dflt plain && setfacl -d -m u:nobody:rwx dflt 2>/dev/null || { echo "ACLs are refused here" > skipped; exit 0; }
            echo a > noacl; echo b > withacl; setfacl -m u:nobody:r withacl
            mkdir srcdir srcdirdef; setfacl -m u:nobody:rx srcdir; setfacl -d -m g:nogroup:rx srcdirdef
            echo x > srcdir/f; setfacl -m u:nobody:rw srcdir/f; echo y > srcdirdef/g
            for d in dflt plain; do
              for f in noacl withacl; do
                cp -p $f $d/cp-$f; "$SLUICE" copy -p $f $d/sl-$f; cp $f $d/cpn-$f; "$SLUICE" copy $f $d/sln-$f
              done
              for f in srcdir srcdirdef; do
                cp -a $f $d/cp-$f; "$SLUICE" copy -a $f $d/sl-$f; cp -r $f $d/cpn-$f; "$SLUICE" copy -r $f $d/sln-$f
              done
              # Several operands at once (the many-files engine, small files in one step).
              mkdir $d/cp-multi $d/sl-multi; cp -p noacl withacl $d/cp-multi/; "$SLUICE" copy -p noacl withacl $d/sl-multi/
            done
            for d in dflt plain; do for f in noacl withacl srcdir srcdirdef srcdir/f srcdirdef/g; do for m in "" n; do
              a=$(getfacl -cp $d/cp$m-$f | sort); b=$(getfacl -cp $d/sl$m-$f | sort)
              if [ "$a" = "$b" ]; then echo "same $d/$m$f"; else echo "DIFF $d/$m$f: cp [$a] sluice [$b]"; fi
            done; done; done > matrix
            for d in dflt plain; do for f in noacl withacl; do
              a=$(getfacl -cp $d/cp-multi/$f | sort); b=$(getfacl -cp $d/sl-multi/$f | sort)
              if [ "$a" = "$b" ]; then echo "same $d/multi/$f"; else echo "DIFF $d/multi/$f: cp [$a] sluice [$b]"; fi
            done; done >> matrix
            """, in: sandbox)
        if let reason = sandbox.text("skipped") { try Test.cancel(Comment(rawValue: reason)) }
        #expect(result.status == 0, "\(result.stderr)")
        let lines = (sandbox.text("matrix") ?? "").split(separator: "\n")
        #expect(lines.count == 28)
        #expect(lines.allSatisfy { $0.hasPrefix("same ") }, "\(lines.filter { !$0.hasPrefix("same ") })")
    }
}

/// Low limits on open files (`prlimit --nofile`): a tree copies completely at 16 and above,
/// durable or not, with nothing left behind; below the minimum it is refused at the start.
@Suite(.timeLimit(.minutes(3)))
struct DescriptorLimitTests {
    /// 240 small files in 8 directories of 15, each with a subdirectory of 15; a chain 20
    /// directories deep with 3 files in each (the walk leaves many levels at once, reopening
    /// each through `..`, while files in them are still in flight); and 3 levels of 3
    /// directories with a file in each.
    static let makeTree = """
        for d in 1 2 3 4 5 6 7 8; do mkdir -p src/d$d/e; for f in $(seq 1 15); do
          echo "file $d $f" > src/d$d/f$f; head -c $((d * 300 + f)) /dev/urandom > src/d$d/e/g$f; done; done
        p=src/deep; for i in $(seq 1 20); do p=$p/l$i; mkdir -p $p; for f in 1 2 3; do echo "$i $f" > $p/f$f; done; done
        for a in 1 2 3; do for b in 1 2 3; do for c in 1 2 3; do
          mkdir -p src/b$a/b$b/b$c; echo $a$b$c > src/b$a/b$b/b$c/f; echo $a$b > src/b$a/b$b/f; done; done; done
        """

    /// The start of a `bash -c '...'` that closes every descriptor above standard error (what
    /// the test process lets its children inherit), as a terminal's shell starts a command.
    static let onlyStandardStreams = #"bash -c 'for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done; exec"#

    @Test(arguments: [16, 20, 24, 32, 64])
    func aTreeCopiesCompletelyUnderALowLimit(limit: Int) async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(
            """
            command -v prlimit >/dev/null || { echo "prlimit is not installed" > skipped; exit 0; }
            \(Self.makeTree)
            \(Self.onlyStandardStreams) prlimit --nofile=\(limit) "$SLUICE" copy -r --no-fsync src fast' 2>> err; echo $? >> status
            \(Self.onlyStandardStreams) prlimit --nofile=\(limit) "$SLUICE" copy -a src durable' 2>> err; echo $? >> status
            diff -r src fast && echo same >> status; diff -r src durable && echo same >> status
            find fast durable -name '.sluice-*' > left
            """, in: sandbox)
        if let reason = sandbox.text("skipped") { try Test.cancel(Comment(rawValue: reason)) }
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.text("status") == "0\n0\nsame\nsame\n", "\(sandbox.text("err") ?? "")")
        #expect(sandbox.text("err") == "")
        #expect(sandbox.text("left") == "")
    }

    @Test func belowTheMinimumATreeCopyIsRefusedAtTheStart() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(
            """
            command -v prlimit >/dev/null || { echo "prlimit is not installed" > skipped; exit 0; }
            mkdir -p src/d && echo x > src/d/f
            prlimit --nofile=9 "$SLUICE" copy -r src dst
            """, in: sandbox)
        if let reason = sandbox.text("skipped") { try Test.cancel(Comment(rawValue: reason)) }
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("sluice: the limit on open files (ulimit -n) is 9,"), "\(result.stderr)")
        #expect(result.stderr.contains("a tree copy needs at least"))
        #expect(!sandbox.exists("dst"))
    }
}
