#if canImport(Glibc)
import Glibc
#endif
import Sluice
import SluiceTestSupport
import Testing

/// `--sparse` on the command line: holes stay holes, `never` writes them, `always` makes them
/// of zeros (a decompressed disk image), and what cannot hold a hole gets zeros.
@Suite(.timeLimit(.minutes(3)))
struct SparseTests {
    static let size = 32 << 20
    static let data = pattern(count: 64 << 10)

    /// A sparse file of ``size`` bytes in `sandbox` whose only data is ``data`` at 8 MiB.
    static func makeSparseSource(_ sandbox: Sandbox, name: String = "sparse") throws {
        let descriptor = try Descriptor.open(Pathname(sandbox.path(name)), O_WRONLY | O_CREAT | O_TRUNC, permissions: 0o644)
        try descriptor.closeAfter { () throws in
            try descriptor.setSize(Int64(size))
            try data.withUnsafeBytes { try descriptor.write(toAbsoluteOffset: 8 << 20, $0) }
        }
    }

    static var content: [UInt8] {
        var content = [UInt8](repeating: 0, count: size)
        content.replaceSubrange((8 << 20)..<(8 << 20) + data.count, with: data)
        return content
    }

    /// `du`'s count: the bytes the file has on the disk.
    static func allocated(_ path: String) -> Int64 {
        var raw = stat()
        return stat(path, &raw) == 0 ? Int64(raw.st_blocks) * 512 : -1
    }

    /// The table's path for a sparse file (ext4, tmpfs): copy_file_range of its data extents;
    /// the pipeline's hole chunks (forced) give the same file, and a CRC-32 with the zeros in it.
    @Test(arguments: [[], ["--pipeline"]])
    func copyKeepsTheHoles(options: [String]) async throws {
        let sandbox = try Sandbox()
        try Self.makeSparseSource(sandbox)
        let result = try await CLI.run(["copy", "-v"] + options + ["sparse", "copy"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.contents("copy") == Self.content)
        #expect(Self.allocated(sandbox.path("copy")) <= Self.allocated(sandbox.path("sparse")) + (1 << 20))
        if options.isEmpty {
            #expect(result.stderr.contains("by copy_file_range, no CRC-32"), "\(result.stderr)")
        } else {
            let expected = String(CRC32(Self.content).value, radix: 16)
            #expect(result.stderr.contains("by pipeline, CRC-32 \(String(repeating: "0", count: 8 - expected.count) + expected)"), "\(result.stderr)")
        }
    }

    /// `--verify` keeps the kernel's path: the source is read a second time for its CRC-32,
    /// then the output is read back.
    @Test func verifiedKernelCopyReadsTheSourceAgain() async throws {
        let sandbox = try Sandbox()
        try Self.makeSparseSource(sandbox)
        let result = try await CLI.run(["copy", "-v", "--verify", "sparse", "copy"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.contents("copy") == Self.content)
        let expected = String(CRC32(Self.content).value, radix: 16)
        let crc = String(repeating: "0", count: 8 - expected.count) + expected
        #expect(
            result.stderr.contains("by copy_file_range, CRC-32 \(crc), verified (the source read a second time for its CRC-32)"),
            "\(result.stderr)")
    }

    /// A rate limit takes the pipeline, and `-v` says why.
    @Test func rateLimitTakesThePipeline() async throws {
        let sandbox = try Sandbox()
        try Self.makeSparseSource(sandbox)
        let result = try await CLI.run(["copy", "-v", "--limit-rate", "1T", "sparse", "copy"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.contents("copy") == Self.content)
        #expect(result.stderr.contains("by pipeline (--limit-rate: a kernel copy cannot be paced)"), "\(result.stderr)")
    }

    @Test func sparseNeverWritesEveryBlock() async throws {
        let sandbox = try Sandbox()
        try Self.makeSparseSource(sandbox)
        let result = try await CLI.run(["copy", "--sparse=never", "sparse", "copy"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.contents("copy") == Self.content)
        #expect(Self.allocated(sandbox.path("copy")) >= Int64(Self.size))
    }

    @Test func standardOutputAndCompressionGetZeros() async throws {
        let sandbox = try Sandbox()
        try Self.makeSparseSource(sandbox)
        let piped = try await CLI.shell("\"$SLUICE\" copy sparse - | cat > piped", in: sandbox)
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(sandbox.contents("piped") == Self.content)
        let compressed = try await CLI.run(["compress", "-k", "sparse"], in: sandbox)
        #expect(compressed.status == 0, "\(compressed.stderr)")
        let restored = try await CLI.run(["decompress", "-c", "sparse.gz"], in: sandbox)
        #expect(restored.stdout == Self.content)
    }

    @Test func decompressWithSparseAlwaysMakesHolesOfZeros() async throws {
        let sandbox = try Sandbox()
        var image = [UInt8](repeating: 0, count: Self.size)
        image.replaceSubrange(100..<100 + Self.data.count, with: Self.data)
        try sandbox.write(image, to: "image")
        #expect(try await CLI.run(["compress", "image"], in: sandbox).status == 0)
        let result = try await CLI.run(["decompress", "-f", "--sparse=always", "image.gz"], in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(sandbox.contents("image") == image)
        #expect(Self.allocated(sandbox.path("image")) < 1 << 20)
    }
}
