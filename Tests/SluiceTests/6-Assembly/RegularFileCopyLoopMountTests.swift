#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Sluice
import SluiceTestSupport

/// ``RegularFileCopy`` on real XFS (with reflink) and Btrfs file systems, loop-mounted for the
/// test: the clone shares the source's extents (no new space), `--reflink=never` does not.
/// Skipped, with the reason, where loop mounts are not possible.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct RegularFileCopyLoopMountTests {
    static let size = 32 << 20

    /// Runs `body` on a fresh `kind` file system; cancels the test (reported as skipped, with
    /// the reason) when it cannot be made.
    static func onLoopMount(_ kind: LoopMount.Kind, _ body: (Pathname) async throws -> Void) async throws {
        do {
            try await LoopMount.with(kind, body)
        } catch let unavailable as LoopMount.Unavailable {
            try Test.cancel(Comment(rawValue: "\(kind.rawValue) loop mount not possible here: \(unavailable)"))
        }
    }

    static func copy(
        _ source: Pathname, to destination: Pathname, options: RegularFileCopy.Options = .init(),
        system: SystemCalls = .live
    ) async throws -> CopyReport {
        let chunks = try await FileChunks.open(source, descriptor: nil, ownsDescriptor: true, chunkSize: 1 << 20, system: system)
        let sink = try await FileSink.create(at: FileLocation(path: destination), source: chunks.status, options: .init(), system: system)
        return try await RegularFileCopy(from: chunks, to: sink, options: options).run()
    }

    @Test(.enabled(if: LoopMount.isPossible(.xfs), "needs root, loop devices and mkfs.xfs"), arguments: [LoopMount.Kind.xfs])
    func xfsClones(kind: LoopMount.Kind) async throws { try await Self.clones(on: kind) }

    @Test(.enabled(if: LoopMount.isPossible(.btrfs), "needs root, loop devices and mkfs.btrfs"), arguments: [LoopMount.Kind.btrfs])
    func btrfsClones(kind: LoopMount.Kind) async throws { try await Self.clones(on: kind) }

    /// A clone: the same bytes, no new space; then `--reflink=never`: the pipeline, new space.
    static func clones(on kind: LoopMount.Kind) async throws {
        try await onLoopMount(kind) { mountPoint in
            let data = randomBytes(count: size, seed: 0xC10E)
            let source = mountPoint.appending("source")
            try writeFile(source, data)
            sync()
            let before = try LoopMount.usedBytes(at: mountPoint)
            let report = try await copy(source, to: mountPoint.appending("clone"))
            sync()
            let afterClone = try LoopMount.usedBytes(at: mountPoint)
            #expect(report.method == .clone)
            #expect(report.crc32 == nil)
            #expect(report.bytesWritten == Int64(size))
            #expect(try readFile(mountPoint.appending("clone")) == data)
            #expect(afterClone - before < 1 << 20, "a clone takes no new space: \(afterClone - before) bytes")

            let separate = try await copy(source, to: mountPoint.appending("separate"), options: .init(reflink: .never))
            sync()
            #expect(separate.method == .pipeline)
            #expect(try readFile(mountPoint.appending("separate")) == data)
            #expect(try LoopMount.usedBytes(at: mountPoint) - afterClone >= Int64(size), "--reflink=never takes its own space")
        }
    }

    /// The clone refused: `copy_file_range` in slices, which within XFS shares extents too.
    @Test(.enabled(if: LoopMount.isPossible(.xfs), "needs root, loop devices and mkfs.xfs"))
    func xfsKernelCopyAfterARefusedClone() async throws {
        try await Self.onLoopMount(.xfs) { mountPoint in
            let data = randomBytes(count: Self.size, seed: 0xCF2)
            let source = mountPoint.appending("source")
            try writeFile(source, data)
            let calls = KernelCalls(clone: .notSupported)
            let report = try await Self.copy(
                source, to: mountPoint.appending("copy"), options: .init(sliceSize: 4 << 20), system: calls.system)
            #expect(report.method == .kernelCopy)
            #expect(calls.counts.copies == Self.size / (4 << 20) + 1, "the slices, then the end of file")
            #expect(try readFile(mountPoint.appending("copy")) == data)
        }
    }

    /// Across two file systems (XFS to this machine's temporary directory): no clone.
    @Test(.enabled(if: LoopMount.isPossible(.xfs), "needs root, loop devices and mkfs.xfs"))
    func reflinkAlwaysAcrossFileSystemsFails() async throws {
        try await Self.onLoopMount(.xfs) { mountPoint in
            try await withScratchDirectory { directory in
                let source = mountPoint.appending("source")
                try writeFile(source, randomBytes(count: 4096, seed: 1))
                let error = try await #require(throws: FileError.self) {
                    try await Self.copy(source, to: directory.appending("copy"), options: .init(reflink: .always))
                }
                #expect(error.operation == .clone)
                #expect(try entries(in: directory.path).isEmpty)
            }
        }
    }
}
