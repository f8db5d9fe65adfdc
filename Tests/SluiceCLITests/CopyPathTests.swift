#if canImport(Glibc)
import Glibc
#endif
import Sluice
import SluiceTestSupport
import Testing

/// `sluice copy`'s paths: `-v` names the one taken, `--reflink` and `--sparse` as cp spells
/// them, and a clone on a loop-mounted XFS file system (skipped, with the reason, where loop
/// mounts are not possible).
@Suite(.timeLimit(.minutes(3)))
struct CopyPathTests {
    /// On this machine's temporary directory the table's path (copy_file_range on ext4 and
    /// tmpfs): `-v` names it and says that such a copy has no CRC-32.
    @Test(.enabled(if: ScratchDirectory.isOnExt4OrTmpfs, "the temporary directory is not on ext4 or tmpfs"))
    func verboseNamesTheKernelCopyAndItsMissingCRC32() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(pattern(count: 100_000), to: "source")
        #expect(try sandbox.plainCopyPath() == .kernelCopy)
        let result = try await CLI.run(["copy", "-v", "source", "copy"], in: sandbox)
        #expect(result.status == 0)
        let report = try #require(result.stderrLines.last)
        #expect(report.contains(", by copy_file_range, no CRC-32 (the data did not pass through sluice), "), "\(report)")
        #expect(sandbox.contents("copy") == pattern(count: 100_000))
    }

    /// `--pipeline` passes the data through sluice: `-v` gives its CRC-32.
    @Test func verboseNamesThePipelineAndItsCRC32() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(pattern(count: 100_000), to: "source")
        let result = try await CLI.run(["copy", "-v", "--pipeline", "source", "copy"], in: sandbox)
        #expect(result.status == 0)
        let report = try #require(result.stderrLines.last)
        #expect(report.contains(", by pipeline, CRC-32 "), "\(report)")
        #expect(sandbox.contents("copy") == pattern(count: 100_000))
    }

    @Test(arguments: [
        (["--reflink=always", "--sparse=never"], "--reflink=always can be used only with --sparse=auto"),
        (["--reflink", "--pipeline"], "--reflink=always clones: it cannot go through the pipeline"),
        (["--reflink=always", "--chunk-size", "4K"], "--reflink=always clones: it cannot go through the pipeline"),
        (["--reflink=sometimes"], "invalid value 'sometimes' for --reflink"),
        (["--sparse=sometimes"], "unknown value 'sometimes' for --sparse"),
        (["--sparse"], "unknown value 'source' for --sparse (expected auto or always or never)"),
    ])
    func badCombinationsAreUsageErrors(options: [String], message: String) async throws {
        let sandbox = try Sandbox()
        try sandbox.write("data", to: "source")
        let result = try await CLI.run(["copy"] + options + ["source", "copy"], in: sandbox)
        #expect(result.status == 64)
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(!sandbox.exists("copy"))
    }

    @Test func reflinkAlwaysWhereNoCloneIsPossibleFailsAndLeavesNothing() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(pattern(count: 10_000), to: "source")
        let result = try await CLI.run(["copy", "--reflink=always", "source", "copy"], in: sandbox)
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("sluice: cannot clone to 'copy': "), "\(result.stderr)")
        #expect(sandbox.listing() == ["source"])
    }

    @Test(.enabled(if: LoopMount.isPossible(.xfs), "needs root, loop devices and mkfs.xfs"))
    func xfsCloneIsNamedAndHasNoCRC32() async throws {
        do {
            try await LoopMount.with(.xfs) { mountPoint in
                let source = "\(mountPoint)/source"
                let data = pattern(count: 8 << 20)
                try writeBytes(data, to: source)
                let sandbox = try Sandbox()
                let runs = [([String](), "clone"), (["--reflink=never"], "pipeline"), (["--pipeline"], "pipeline")]
                for (index, (options, path)) in runs.enumerated() {
                    let copy = "\(mountPoint)/copy-\(index)"
                    let result = try await CLI.run(["copy", "-v", "--no-fsync"] + options + [source, copy], in: sandbox)
                    #expect(result.status == 0, "\(result.stderr)")
                    let report = try #require(result.stderrLines.last)
                    #expect(report.contains(", by \(path)"), "\(report)")
                    #expect(report.contains("no CRC-32") == (path == "clone"), "\(report)")
                    #expect(try readBytes(copy) == data)
                }
                // A clone shares the source's extents: nothing to read back.
                let result = try await CLI.run(["copy", "-v", "--verify", source, "\(mountPoint)/verified"], in: sandbox)
                #expect(result.status == 0, "\(result.stderr)")
                #expect(result.stderrLines.last?.contains(", by clone, no CRC-32 (the data did not pass through sluice), not read back (clone, shared extents)") == true, "\(result.stderr)")
            }
        } catch let unavailable as LoopMount.Unavailable {
            try Test.cancel(Comment(rawValue: "xfs loop mount not possible here: \(unavailable)"))
        }
    }

    /// The clone keeps every guarantee of the pipeline: the same-file refusal, an existing
    /// destination refused without -f and replaced with it, --preserve's mode and times.
    @Test(.enabled(if: LoopMount.isPossible(.xfs), "needs root, loop devices and mkfs.xfs"))
    func xfsCloneKeepsTheGuarantees() async throws {
        do {
            try await LoopMount.with(.xfs) { mountPoint in
                let sandbox = try Sandbox()
                let source = "\(mountPoint)/source"
                let copy = "\(mountPoint)/copy"
                let data = pattern(count: 1 << 20)
                try writeBytes(data, to: source)
                #expect(chmod(source, 0o640) == 0)
                var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 123_456_789), timespec(tv_sec: 1_000_000_000, tv_nsec: 123_456_789)]
                #expect(utimensat(AT_FDCWD, source, &times, 0) == 0)

                let same = try await CLI.run(["copy", source, source], in: sandbox)
                #expect(same.status == 1)
                #expect(same.stderr.contains("same file"), "\(same.stderr)")

                try writeBytes([1, 2, 3], to: copy)
                let refused = try await CLI.run(["copy", source, copy], in: sandbox)
                #expect(refused.status == 1)
                #expect(try readBytes(copy) == [1, 2, 3])

                let replaced = try await CLI.run(["copy", "-v", "-f", "--preserve", source, copy], in: sandbox)
                #expect(replaced.status == 0, "\(replaced.stderr)")
                #expect(replaced.stderr.contains(", by clone"), "\(replaced.stderr)")
                #expect(try readBytes(copy) == data)
                var status = stat()
                #expect(stat(copy, &status) == 0)
                #expect(status.st_mode & 0o7777 == 0o640)
                #expect(status.st_mtim.tv_sec == 1_000_000_000 && status.st_mtim.tv_nsec == 123_456_789)
                let names = try entries(in: Pathname(mountPoint.description)).map(\.description)
                #expect(Set(names).isSubset(of: ["source", "copy", "lost+found"]), "no temporary file left: \(names)")
            }
        } catch let unavailable as LoopMount.Unavailable {
            try Test.cancel(Comment(rawValue: "xfs loop mount not possible here: \(unavailable)"))
        }
    }
}

/// Writes `bytes` to a new file at `path`.
func writeBytes(_ bytes: [UInt8], to path: String) throws {
    let descriptor = try Descriptor.open(Pathname(path), O_WRONLY | O_CREAT | O_TRUNC, permissions: 0o644)
    try descriptor.closeAfter { () throws in try bytes.withUnsafeBytes { try descriptor.write(contentsOf: $0) } }
}

/// Every byte of the file at `path`.
func readBytes(_ path: String) throws -> [UInt8] {
    let descriptor = try Descriptor.open(Pathname(path), O_RDONLY)
    return try descriptor.closeAfter { () throws in
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = try buffer.withUnsafeMutableBytes { try descriptor.read(into: $0) }
            if count == 0 { return result }
            result += buffer[..<count]
        }
    }
}
