#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// Times like gzip, permissions like cp: `compress` and `decompress` give their output file the
/// source's modification time (the header keeps MTIME 0), and the source's permission bits as
/// the kernel applies them at creation (the directory's default ACL, else the umask);
/// `--preserve` adds the access time and the owner.
@Suite(.timeLimit(.minutes(3)))
struct TimesAndModesTests {
    static let hasSetfacl = FileManager.default.isExecutableFile(atPath: "/usr/bin/setfacl")

    /// Modification and access times of `name` as the file system keeps them, in nanoseconds.
    static func times(_ sandbox: Sandbox, _ name: String) throws -> (modified: Int64, accessed: Int64) {
        let status = try #require(sandbox.status(name))
        func nanoseconds(_ time: timespec) -> Int64 { Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec) }
        return (nanoseconds(status.st_mtim), nanoseconds(status.st_atim))
    }

    static func mode(_ sandbox: Sandbox, _ name: String) -> UInt32? {
        sandbox.status(name).map { UInt32($0.st_mode & 0o7777) }
    }

    /// A source whose times are far from now, with nanoseconds: modified 2021-03-04
    /// 05:06:07.123456789, accessed 2020-01-02 03:04:05.987654321 (UTC).
    static func oldSource(_ name: String, in sandbox: Sandbox) async throws {
        try sandbox.write(mixedData(count: 50_000), to: name)
        let touched = try await CLI.shell(
            "TZ=UTC touch -m -d '2021-03-04 05:06:07.123456789' \(name) && "
                + "TZ=UTC touch -a -d '2020-01-02 03:04:05.987654321' \(name)", in: sandbox)
        try #require(touched.status == 0, "\(touched.stderr)")
    }

    static let modified: Int64 = 1_614_834_367_123_456_789
    static let accessed: Int64 = 1_577_934_245_987_654_321

    @Test func compressAndDecompressKeepTheModificationTimeAsGzipDoes() async throws {
        let sandbox = try Sandbox()
        try await Self.oldSource("s", in: sandbox)
        try #require(try Self.times(sandbox, "s").modified == Self.modified)
        #expect(try await CLI.run(["compress", "s"], in: sandbox).status == 0)
        #expect(try Self.times(sandbox, "s.gz").modified == Self.modified)
        // The header still has MTIME 0: the output stays reproducible.
        #expect(Array(try #require(sandbox.contents("s.gz"))[4..<8]) == [0, 0, 0, 0])
        #expect(try await CLI.run(["decompress", "-o", "t", "s.gz"], in: sandbox).status == 0)
        #expect(try Self.times(sandbox, "t").modified == Self.modified)
        // gzip gives its output the same time (it copies the access time too).
        if Tool.gzip != nil {
            #expect(try await CLI.shell("gzip -k -S .g2 s", in: sandbox).status == 0)
            #expect(try Self.times(sandbox, "s.g2").modified == Self.modified)
        }
        // Without --preserve the access time is not the source's, and copy keeps neither (as cp).
        #expect(try Self.times(sandbox, "s.gz").accessed != Self.accessed)
        #expect(try await CLI.run(["copy", "s", "c"], in: sandbox).status == 0)
        #expect(try Self.times(sandbox, "c").modified != Self.modified)
    }

    @Test func aReplacedOutputTakesTheSourcesTime() async throws {
        let sandbox = try Sandbox()
        try await Self.oldSource("s", in: sandbox)
        try sandbox.write("old", to: "s.gz")
        #expect(try await CLI.run(["compress", "-f", "s"], in: sandbox).status == 0)
        #expect(try Self.times(sandbox, "s.gz").modified == Self.modified)
    }

    @Test func preserveAddsTheAccessTime() async throws {
        let sandbox = try Sandbox()
        try await Self.oldSource("s", in: sandbox)
        #expect(try await CLI.run(["compress", "--preserve", "s"], in: sandbox).status == 0)
        let times = try Self.times(sandbox, "s.gz")
        #expect(times.modified == Self.modified)
        #expect(times.accessed == Self.accessed)
    }

    /// Standard input and output have no times to give or take.
    @Test func aPipeGivesNoTime() async throws {
        let sandbox = try Sandbox()
        try await Self.oldSource("s", in: sandbox)
        let result = try await CLI.shell(#"cat s | "$SLUICE" compress -o p.gz"#, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Self.times(sandbox, "p.gz").modified != Self.modified)
    }

    /// The umask narrows the source's bits, as for cp; gzip would give the source's bits
    /// whatever the umask (its `fchmod`).
    @Test func theUmaskNarrowsTheSourcesBits() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(
            """
            seq 1000 > s && chmod 644 s && (umask 077 && "$SLUICE" compress s) || exit 1
            cp s.gz u.gz && chmod 666 u.gz && (umask 027 && "$SLUICE" decompress -o t u.gz)
            """, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Self.mode(sandbox, "s.gz") == 0o600)
        #expect(Self.mode(sandbox, "t") == 0o640)
    }

    /// A directory's default ACL decides, not the umask (here 077, which alone would give 0600).
    @Test(.enabled(if: hasSetfacl, "setfacl is not installed (apt-get install acl)"))
    func aDefaultACLDecidesTheBits() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(
            """
            mkdir acl && setfacl -d -m u::rwx,g::r-x,o::---,m::rwx acl || exit 77
            seq 1000 > s && chmod 644 s && umask 077 && cp s acl/by-cp || exit 1
            "$SLUICE" compress -o acl/s.gz s && "$SLUICE" decompress -o acl/t acl/s.gz
            """, in: sandbox)
        try #require(result.status != 77, "this file system keeps no ACLs")
        #expect(result.status == 0, "\(result.stderr)")
        // The source's 0644 through the default ACL: what cp makes.
        #expect(Self.mode(sandbox, "acl/by-cp") == 0o640)
        #expect(Self.mode(sandbox, "acl/s.gz") == 0o640)
        #expect(Self.mode(sandbox, "acl/t") == 0o640)
    }
}
