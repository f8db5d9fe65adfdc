#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// The parallel decoder's memory is bounded by bytes, never by a count of members: a file of
/// many tiny BGZF members (what `cat` of many bgzipped records gives) decodes at every `-p` in
/// about the memory of one thread, and within an address-space limit that `bgzip -d` meets.
@Suite(.timeLimit(.minutes(3)))
struct ManyMembersTests {
    /// 20,000 records, each a BGZF member followed by an empty one (bgzip's end-of-file
    /// marker), about 1 MB; and what they decode to.
    static func tinyMembers() -> (file: [UInt8], data: [UInt8]) {
        var (file, data): ([UInt8], [UInt8]) = ([], [])
        let empty = GzipBytes.bgzfMember(of: [], deflate: GzipBytes.storedBlock([]))
        for number in 0..<20_000 {
            let record = Array("record \(number)\n".utf8)
            file += GzipBytes.bgzfMember(of: record, deflate: GzipBytes.storedBlock(record)) + empty
            data += record
        }
        return (file, data)
    }

    @Test(
        .disabled(if: Sanitizer.inflatesMemory, "the sanitizers reserve terabytes of address space"),
        arguments: ["1", "2", "3"])
    func tinyMembersDecodeUnderAnAddressSpaceLimit(threads: String) async throws {
        let sandbox = try Sandbox()
        let (file, data) = Self.tinyMembers()
        try sandbox.write(file, to: "records.gz")
        let result = try await CLI.shell(
            #"ulimit -v 2000000 && "$SLUICE" decompress -p \#(threads) -o records records.gz"#, in: sandbox)
        #expect(result.status == 0, "\(result.stderr)")
        let decoded = sandbox.contents("records") == data
        #expect(decoded)
    }

    /// Peak RSS (GNU time) of `-p 2` against `-p 1`: tiny members, and members of 64 KiB of
    /// zeros each (about 100 bytes compressed: a batch's bytes are few, its output is not).
    @Test(
        .enabled(if: Tool.gnuTime != nil, "GNU time (/usr/bin/time, Debian package 'time') is not installed"),
        .disabled(if: Sanitizer.inflatesMemory, "sanitizers inflate RSS: memory is asserted in normal builds only"))
    func twoThreadsTakeAtMostOneThreadsMemoryAnd32MiB() async throws {
        let sandbox = try Sandbox()
        try sandbox.write(Self.tinyMembers().file, to: "records.gz")
        let zeros = [UInt8](repeating: 0, count: 65_280)
        let member = GzipBytes.bgzfMember(of: zeros, deflate: try await GzipBytes.rawDeflate(of: zeros, in: sandbox))
        try sandbox.write(Array([[UInt8]](repeating: member, count: 2_000).joined()), to: "zeros.gz")
        for name in ["records.gz", "zeros.gz"] {
            var peaks: [String: Int] = [:]
            for threads in ["1", "2"] {
                let result = try await CLI.shell(
                    #"/usr/bin/time -f %M -o rss.txt "$SLUICE" decompress -p \#(threads) -c \#(name) > /dev/null"#, in: sandbox)
                #expect(result.status == 0, "\(name) -p \(threads): \(result.stderr)")
                peaks[threads] = sandbox.text("rss.txt").flatMap { Int($0.split(separator: "\n").last ?? "") }
            }
            let (one, two) = (try #require(peaks["1"]), try #require(peaks["2"]))
            #expect(two <= one + 32 * 1024, "\(name): peak RSS -p 2 \(two) KiB, -p 1 \(one) KiB")
        }
    }
}

/// The buffers Sluice sizes itself (a chunk, an output chunk, a block) that cannot be had fail
/// as an error with a message and exit 1, nothing committed, never as a trap: here a chunk
/// size of 1 GiB under an address-space limit of about 1.4 GiB.
@Suite(
    .timeLimit(.minutes(3)),
    .disabled(if: Sanitizer.inflatesMemory, "the sanitizers reserve terabytes of address space"))
struct OutOfMemoryTests {
    @Test(arguments: [
        ["copy", "--chunk-size", "1G", "input", "output"],
        ["compress", "-p", "1", "--chunk-size", "1G", "-o", "output", "input"],
        ["compress", "-p", "2", "--chunk-size", "1G", "-o", "output", "input"],
        ["decompress", "-p", "1", "--chunk-size", "1G", "-o", "output", "input.gz"],
        ["decompress", "-p", "2", "--chunk-size", "1G", "-o", "output", "input.gz"],
    ])
    func aBufferThatCannotBeHadIsAnError(arguments: [String]) async throws {
        let sandbox = try Sandbox()
        try await writeWithGzip(pattern(count: 3 << 20), to: "input", in: sandbox)
        let result = try await CLI.shell(
            #"ulimit -v 1500000 && exec "$SLUICE" "# + arguments.joined(separator: " "), in: sandbox)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("out of memory for 1073741824 bytes"), "\(result.stderr)")
        expectNotCommitted("output", in: sandbox)
    }
}

/// A library user's code between the reader and the writer (a `map` over ``FileChunks``, a
/// transform of their own, a ``Copier`` job's transform) may make a data chunk of every hole
/// chunk it is given: the pipeline's bound (`capacity` chunks per channel plus one in each
/// stage, each at most the chunk size) holds all the same, holes or not. A process of its own
/// (`PipelineMemoryProbe`) reads a 1 GiB sparse file with each and compresses it; its peak RSS is
/// about that of a dense 64 MiB file read the same way (before: 433 MB through `map`, with
/// 269 MB in the channels, and 98 MB through a transform, against 36 MB).
@Suite(
    .timeLimit(.minutes(3)),
    .disabled(if: Sanitizer.inflatesMemory, "sanitizers inflate RSS: memory is asserted in normal builds only"))
struct HoleMemoryTests {
    /// `PipelineMemoryProbe`, built beside `sluice`.
    static var probe: String {
        URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().appendingPathComponent("PipelineMemoryProbe").path
    }

    /// Runs the probe in `mode` on `input`; its channels' peak and its peak RSS, in bytes.
    static func run(_ mode: String, _ input: String, in sandbox: Sandbox) async throws -> (buffered: Int, resident: Int) {
        let result = try await CLI.shell(#""\#(probe)" \#(mode) \#(input) \#(input).\#(mode).gz"#, in: sandbox)
        #expect(result.status == 0, "\(mode) \(input): \(result.stderr)")
        let figures = result.stdoutText.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        try #require(figures.count == 2, "\(mode) \(input): \(result.stdoutText)")
        return (figures[0], figures[1])
    }

    @Test func aSparseFileThroughAUsersCodeTakesTheMemoryOfADenseOne() async throws {
        let sandbox = try Sandbox()
        let sparse = open(sandbox.path("sparse"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        #expect(ftruncate(sparse, 1 << 30) == 0)
        #expect(pwrite(sparse, "tail", 4, 1 << 30) == 4)
        close(sparse)
        try sandbox.write(pattern(count: 64 << 20), to: "dense")
        let dense = try await Self.run("none", "dense", in: sandbox)
        for mode in ["map", "transform", "copier"] {
            let (buffered, resident) = try await Self.run(mode, "sparse", in: sandbox)
            // Two channels of 4 chunks of 1 MiB (PipelineOptions' and Copier.Options' defaults).
            #expect(buffered <= 2 * 4 << 20, "\(mode): \(buffered) bytes in the channels")
            #expect(resident <= dense.resident + 16 << 20, "\(mode): peak RSS \(resident), a dense file's \(dense.resident)")
        }
    }
}
