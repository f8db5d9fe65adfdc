#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// C17: a write that fails mid-copy (`EFBIG` under `ulimit -f`) commits nothing.
@Suite(.timeLimit(.minutes(3)))
struct MidCopyFailureTests {
    /// 2 MiB of random data, `OLD` at the destination, a 1024-block (512 KiB) file size limit
    /// and SIGXFSZ ignored, so `write(2)` fails with `EFBIG`.
    static let script = """
        head -c 2M /dev/urandom > big.bin; printf OLD > dest.bin
        ( ulimit -f 1024; trap '' XFSZ; "$SLUICE" copy %@ big.bin dest.bin )
        """

    @Test func fileTooLargeLeavesTheDestinationUntouched() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(Self.script.replacingOccurrences(of: "%@", with: "--force"), in: sandbox)
        #expect(result.status != 0)
        #expect(result.stderr.contains("File too large"), "\(result.stderr)")
        #expect(result.stderr.contains("'dest.bin'"))
        #expect(sandbox.text("dest.bin") == "OLD")
        #expect(sandbox.leftovers().isEmpty)
    }

    @Test func fileTooLargeEndsTheJSONProgressWithAnError() async throws {
        let sandbox = try Sandbox()
        let result = try await CLI.shell(
            Self.script.replacingOccurrences(of: "%@", with: "--force --progress=json"), in: sandbox)
        #expect(result.status == 1)
        let lines = result.stderrLines
        let json = lines.filter { $0.hasPrefix("{") }
        let last = try ProgressLine(try #require(json.last))
        #expect(last.object["done"] as? Bool == true)
        let error = try #require(last.object["error"] as? String)
        #expect(error.contains("File too large"))
        // The plain message follows the progress.
        #expect(lines.last?.hasPrefix("sluice: ") == true)
        #expect(sandbox.text("dest.bin") == "OLD")
        #expect(sandbox.leftovers().isEmpty)
    }
}

/// C24: the reader of standard output goes away, for `copy` and `decompress` alike.
@Suite(.timeLimit(.minutes(3)))
struct BrokenPipeTests {
    /// Commands that write `big`'s 2 MiB to standard output.
    static let commands: [[String]] = [["copy", "big", "-"], ["decompress", "-c", "big.gz"]]

    /// `big` (2 MiB of the test pattern) and `big.gz`.
    static func makeInput(in sandbox: Sandbox) async throws {
        try await writeWithGzip(pattern(count: 2 * 1024 * 1024), to: "big", in: sandbox)
    }

    @Test(arguments: commands)
    func closedOutputPipeEndsQuietlyWith141(_ arguments: [String]) async throws {
        let sandbox = try Sandbox()
        try await Self.makeInput(in: sandbox)
        let output = try Pipe.make()
        let process = try CLI.start(arguments, in: sandbox, stdout: .descriptor(output.writeEnd))
        output.closeWriteEnd()
        // Read 10 bytes, as `head -c 10`, then leave.
        let first = await onThread { () -> [UInt8] in
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 10)
            while bytes.count < 10 {
                let count = buffer.withUnsafeMutableBytes { read(output.readEnd, $0.baseAddress, 10 - bytes.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                bytes += buffer[..<count]
            }
            return bytes
        }
        output.closeReadEnd()
        let closed = ContinuousClock.now
        let result = await process.finish()
        #expect(first == Array(pattern(count: 10)))
        #expect(result.status == 141)
        #expect(result.signal == nil, "sluice must exit by itself, not die of SIGPIPE")
        #expect(result.stderr.isEmpty)
        #expect(result.exited - closed < .seconds(5))
    }

    @Test(arguments: commands)
    func headInAShellPipelineEndsItWith141(_ arguments: [String]) async throws {
        let sandbox = try Sandbox()
        try await Self.makeInput(in: sandbox)
        let command = arguments.joined(separator: " ")
        let result = try await CLI.shell(
            #"{ "$SLUICE" "# + command + #" 2> stderr.txt; echo $? > status.txt; } | head -c 10 > head.out"#, in: sandbox)
        #expect(result.status == 0)
        #expect(sandbox.text("status.txt") == "141\n")
        #expect(sandbox.text("stderr.txt") == "")
        #expect(sandbox.contents("head.out") == Array(pattern(count: 10)))
    }
}

/// C15: a sparse file copies equal and keeps its size. Large: one at a time, no fsync, outputs
/// deleted with the sandbox.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct LargeFileTests {
    @Test func sparseGigabyteCopiesEqual() async throws {
        let sandbox = try Sandbox()
        let size: Int64 = 1 << 30
        let descriptor = open(sandbox.path("sparse.img"), O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        try #require(descriptor >= 0)
        #expect(ftruncate(descriptor, off_t(size)) == 0)
        let written = Array("END".utf8).withUnsafeBytes { pwrite(descriptor, $0.baseAddress, 3, off_t(size - 3)) }
        close(descriptor)
        try #require(written == 3)

        let result = try await CLI.run(["copy", "--no-fsync", "sparse.img", "copy.img"], in: sandbox)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        #expect(sandbox.status("copy.img").map { Int64($0.st_size) } == size)
        let cmp = try await CLI.shell("cmp sparse.img copy.img && tail -c 3 copy.img", in: sandbox)
        #expect(cmp.status == 0, "\(cmp.stderr)")
        #expect(cmp.stdoutText == "END")
        unlink(sandbox.path("copy.img"))
        unlink(sandbox.path("sparse.img"))
    }
}
