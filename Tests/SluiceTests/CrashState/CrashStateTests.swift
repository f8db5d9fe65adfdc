#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import Testing
@testable import Sluice
import SluiceTestSupport

/// Every crash point of each scenario's recorded trace, every state the persistence model
/// allows there (all of them where few, else each operation and each pair lost, and a sample
/// from a printed seed): each destination is old or new, never partial; nothing else changed;
/// once the operation returned, what it wrote is durable (``CrashExplorer``).
///
/// One line per scenario: `crash states: SCENARIO points=N states=M violations=0 seed=S`.
/// `SLUICE_CRASH_SAMPLES` bounds the states explored at each crash point (the sanitizers' runs,
/// whose lines end `sample=N`); `SLUICE_CRASH_SEED` sets the seed.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct CrashStateTests {
    static let seed: UInt64 = ProcessInfo.processInfo.environment["SLUICE_CRASH_SEED"].flatMap { UInt64($0) } ?? 0x5EED_2026
    static let statesPerPoint = ProcessInfo.processInfo.environment["SLUICE_CRASH_SAMPLES"].flatMap { Int($0) } ?? .max
    static let chunkSize = 4096

    /// Bytes that differ per seed, never all zeros.
    static func bytes(_ count: Int, seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed) &* 13 &+ 1) }
    }

    /// A recorded run of `body` in a fresh scratch directory made by `setUp`.
    struct Recorded {
        var scratch: ScratchDirectory
        var recorder: CrashRecorder
        var explorer: CrashExplorer
    }

    static func record(
        setUp: (ScratchDirectory) throws -> Void, _ body: (ScratchDirectory, SystemCalls) async throws -> Void,
        base: SystemCalls = .live
    ) async throws -> Recorded {
        let scratch = try ScratchDirectory(prefix: "sluice-crash")
        try setUp(scratch)
        let recorder = CrashRecorder(root: scratch.path)
        try await body(scratch, recorder.systemCalls(over: base))
        let final = recorder.finalState()
        // The trace replayed reaches what is on disk: nothing that changed it bypassed the seam.
        #expect(recorder.replayed.entries() == final.entries(), "the trace does not replay to the final state")
        var explorer = CrashExplorer(initial: recorder.initial, operations: recorder.operations, final: final)
        explorer.seed = seed
        explorer.maximumStatesPerPoint = statesPerPoint
        return Recorded(scratch: scratch, recorder: recorder, explorer: explorer)
    }

    /// Explores `recorded`, prints the scenario's line, and expects no violation.
    static func expectHolds(_ name: String, _ recorded: Recorded, sourceLocation: SourceLocation = #_sourceLocation) {
        defer { recorded.scratch.remove() }
        let report = recorded.explorer.explore()
        // A bounded run (the sanitizers') says its bound.
        let bound = statesPerPoint == .max ? "" : " sample=\(statesPerPoint)"
        print("crash states: \(name) points=\(report.points) states=\(report.states) violations=\(report.violations.count) seed=\(seed)\(bound)")
        #expect(report.states > report.points, sourceLocation: sourceLocation)
        #expect(report.violations.isEmpty, "\(report.violations.prefix(3))", sourceLocation: sourceLocation)
    }

    /// One file through the pipeline (or the path `options` choose) from `in` to `out`.
    static func copyFile(
        _ scratch: ScratchDirectory, _ system: SystemCalls, options: RegularFileCopy.Options, sink: FileSink.Options = .init(),
        findsHoles: Bool = true
    ) async throws {
        let source = try await FileChunks.open(
            scratch.appending("in"), descriptor: nil, ownsDescriptor: true, chunkSize: chunkSize, findsHoles: findsHoles, system: system)
        let destination = try await FileSink.create(at: FileLocation(path: scratch.appending("out")), source: source.status, options: sink, system: system)
        _ = try await RegularFileCopy(from: source, to: destination, options: options).run()
    }

    /// Through the pipeline with `transform`, from `in` to `out`.
    static func transformFile(
        _ scratch: ScratchDirectory, _ system: SystemCalls, _ transform: @escaping @Sendable () throws -> any ChunkTransform
    ) async throws {
        let source = try await FileChunks.open(
            scratch.appending("in"), descriptor: nil, ownsDescriptor: true, chunkSize: chunkSize, system: system)
        let destination = try await FileSink.create(at: FileLocation(path: scratch.appending("out")), source: source.status, options: .init(), system: system)
        _ = try await Pipeline(from: source, to: destination, totalBytes: source.expectedSize, options: .init(capacity: 2), transform: transform).run()
    }

    static let pipeline = RegularFileCopy.Options(forcesPipeline: true, pipeline: .init(capacity: 2))

    // MARK: Scenarios

    @Test func newFile() async throws {
        let recorded = try await Self.record(setUp: { try writeFile($0.appending("in"), Self.bytes(10_000, seed: 1)) }) {
            try await Self.copyFile($0, $1, options: Self.pipeline)
        }
        Self.expectHolds("new-file", recorded)
    }

    @Test func forceOverAnExistingFile() async throws {
        let recorded = try await Self.record(setUp: { scratch in
            try writeFile(scratch.appending("in"), Self.bytes(9_000, seed: 1))
            try writeFile(scratch.appending("out"), Self.bytes(5_000, seed: 2))
            chmod(scratch.appending("out").description, 0o640)
        }) {
            try await Self.copyFile($0, $1, options: Self.pipeline, sink: .init(replacesExisting: true))
        }
        Self.expectHolds("force", recorded)
    }

    /// Where `O_TMPFILE` cannot be used: a named temporary file (`.sluice-*`), renamed over
    /// the old file.
    @Test func forceWithANamedTemporaryFile() async throws {
        let recorded = try await Self.record(setUp: { scratch in
            try writeFile(scratch.appending("in"), Self.bytes(9_000, seed: 1))
            try writeFile(scratch.appending("out"), Self.bytes(5_000, seed: 2))
        }) {
            var sink = FileSink.Options(replacesExisting: true)
            sink.closesSealedFile = true
            try await Self.copyFile($0, $1, options: Self.pipeline, sink: sink)
        }
        Self.expectHolds("force-named-temporary", recorded)
    }

    /// 8 KiB of data, a 64 KiB hole, 4 KiB of data, and a hole at the end: the pipeline's
    /// holes (a seek past them) and the size set by `ftruncate`.
    @Test func fileWithHoles() async throws {
        let recorded = try await Self.record(setUp: { scratch in try Self.writeSparse(scratch.appending("in")) }) {
            try await Self.copyFile($0, $1, options: Self.pipeline)
        }
        Self.expectHolds("holes", recorded)
    }

    /// The kernel's path: `copy_file_range(2)` of each data extent of the sparse file.
    @Test func kernelCopy() async throws {
        let recorded = try await Self.record(setUp: { scratch in try Self.writeSparse(scratch.appending("in")) }) {
            var options = RegularFileCopy.Options()
            options.kernelCopyLimit = 1 << 20
            try await Self.copyFile($0, $1, options: options)
        }
        #expect(recorded.recorder.calls.contains("copy_file_range"))
        Self.expectHolds("copy-file-range", recorded)
    }

    /// A clone (`FICLONE`) on a file system that clones, scripted through the seam: the file
    /// system says Btrfs and the clone writes the source's bytes.
    @Test func clone() async throws {
        var base = SystemCalls.live
        base.fileSystemType = { _ in .success(FileSystemType.btrfs.rawValue) }
        base.clone = { destination, source in
            var status = stat()
            fstat(source, &status)
            var buffer = [UInt8](repeating: 0, count: Int(status.st_size))
            _ = buffer.withUnsafeMutableBytes { pread(source, $0.baseAddress, $0.count, 0) }
            _ = buffer.withUnsafeBytes { pwrite(destination, $0.baseAddress, $0.count, 0) }
            return .success(())
        }
        let recorded = try await Self.record(setUp: { try writeFile($0.appending("in"), Self.bytes(10_000, seed: 3)) }, { scratch, system in
            try await Self.copyFile(scratch, system, options: .init(reflink: .always))
        }, base: base)
        #expect(recorded.recorder.calls.contains("ioctl"))
        Self.expectHolds("clone", recorded)
    }

    @Test func compress() async throws {
        let recorded = try await Self.record(setUp: { try writeFile($0.appending("in"), Self.bytes(20_000, seed: 4)) }) {
            try await Self.transformFile($0, $1) { try GzipEncoder(level: .default, outputChunkSize: Self.chunkSize) }
        }
        Self.expectHolds("compress", recorded)
    }

    @Test func decompress() async throws {
        let compressed = try await Self.gzip(Self.bytes(30_000, seed: 5))
        let recorded = try await Self.record(setUp: { try writeFile($0.appending("in"), compressed) }) {
            try await Self.transformFile($0, $1) { GzipDecoder(outputChunkSize: Self.chunkSize) }
        }
        Self.expectHolds("decompress", recorded)
    }

    /// Several files into one directory through the many-file engine: one `syncfs(2)` batch,
    /// a `sync_file_range(2)` check of each, the renames, one directory `fsync(2)`.
    @Test func severalFilesIntoADirectory() async throws {
        let recorded = try await Self.recordSeveralFiles()
        #expect(recorded.recorder.calls.contains("syncfs"))
        Self.expectHolds("several-files", recorded)
    }

    /// `compress --rm a b c`'s order, through the engine: each source is removed only once its
    /// copy is durable, and its removal is made durable.
    @Test func severalFilesWithTheirSourcesRemoved() async throws {
        let recorded = try await Self.recordSeveralFiles(removingSources: true)
        #expect(recorded.recorder.calls.contains("unlinkat"))
        Self.expectHolds("remove-sources", recorded)
    }

    /// `copy --rm a b c out/` within one file system: each source renamed into `out`, both
    /// directories synced: in every crash state each file is under its old name or its new one.
    @Test func severalFilesMovedByRenames() async throws {
        var recorded = try await Self.record(setUp: { scratch in
            mkdir(scratch.appending("out").description, 0o755)
            for index in 0..<3 { try writeFile(scratch.appending(Pathname("in\(index)")), Self.bytes(1000 + 500 * index, seed: UInt8(index))) }
        }) { scratch, system in
            for index in 0..<3 {
                let moved = try SourceRemoval.rename(
                    scratch.appending(Pathname("in\(index)")), to: scratch.appending(Pathname("out/in\(index)")), force: false,
                    system: system)
                #expect(moved)
            }
        }
        recorded.explorer.removals = (0..<3).map { (Array("in\($0)".utf8), Array("out/in\($0)".utf8)) }
        #expect(recorded.recorder.calls.contains("renameat2"))
        Self.expectHolds("move-renames", recorded)
    }

    /// `copy -a` of a tree: files through the many-file engine, a hard link, a symbolic link, a
    /// subdirectory, modes and times given to directories after their contents.
    @Test func treeWithArchive() async throws {
        let recorded = try await Self.recordTree()
        #expect(recorded.recorder.calls.contains("syncfs"))
        #expect(recorded.recorder.calls.contains("linkat"))
        Self.expectHolds("tree-archive", recorded)
    }

    // MARK: Planted bugs: each a recorded trace changed as a bug would change it

    /// Explores `recorded` with its trace changed by `change`, prints the first violation, and
    /// expects one.
    static func expectCaught(
        _ name: String, _ recorded: Recorded, sourceLocation: SourceLocation = #_sourceLocation,
        change: (inout [CrashOperation], inout CrashExplorer) throws -> Void
    ) throws {
        defer { recorded.scratch.remove() }
        var explorer = recorded.explorer
        var operations = explorer.operations
        try change(&operations, &explorer)
        explorer.operations = operations
        let report = explorer.explore()
        print("planted bug: \(name) violations=\(report.violations.count) first: \(report.violations.first.map(String.init(describing:)) ?? "none")")
        #expect(!report.violations.isEmpty, "\(name) was not caught", sourceLocation: sourceLocation)
    }

    /// The index of the operation that names `name` in a directory (link, rename, create).
    static func naming(_ name: String, in operations: [CrashOperation]) throws -> Int {
        try #require(operations.lastIndex { operation in
            switch operation.effect {
            case .entry(_, let entry, let node?): entry == Array(name.utf8) && node >= 0
            case .rename(_, _, _, let entry): entry == Array(name.utf8)
            default: false
            }
        })
    }

    /// The node `operations[index]` names.
    static func namedNode(_ index: Int, in operations: [CrashOperation]) -> Int? {
        switch operations[index].effect {
        case .entry(_, _, let node): node
        case .rename(let directory, let name, _, _):
            // The node that had the old name: the last entry made under it before.
            operations[..<index].reversed().lazy.compactMap { operation -> Int? in
                if case .entry(directory, name, let node?) = operation.effect { return node }
                return nil
            }.first
        default: nil
        }
    }

    /// The call that names `out` (its `linkat` or its rename) moved to just before the `fsync`
    /// of the file it names.
    static func moveNamingBeforeTheFileSync(_ operations: inout [CrashOperation], _: inout CrashExplorer) throws {
        let naming = try naming("out", in: operations)
        let node = try #require(namedNode(naming, in: operations))
        let sync = try #require(operations[..<naming].lastIndex { $0.sync == .node(node) })
        operations.insert(operations.remove(at: naming), at: sync)
    }

    @Test func plantedDirectorySyncDroppedIsCaught() async throws {
        let recorded = try await Self.record(setUp: { try writeFile($0.appending("in"), Self.bytes(10_000, seed: 1)) }) {
            try await Self.copyFile($0, $1, options: Self.pipeline)
        }
        try Self.expectCaught("directory fsync after the commit dropped", recorded) { operations, _ in
            let sync = try #require(operations.lastIndex { $0.sync == .node(CrashModel.root) })
            operations.remove(at: sync)
        }
    }

    @Test func plantedLinkBeforeTheFileSyncIsCaught() async throws {
        let recorded = try await Self.record(setUp: { try writeFile($0.appending("in"), Self.bytes(10_000, seed: 1)) }) {
            try await Self.copyFile($0, $1, options: Self.pipeline)
        }
        try Self.expectCaught("linkat moved before the file's fsync", recorded, change: Self.moveNamingBeforeTheFileSync)
    }

    @Test func plantedRenameBeforeTheFileSyncIsCaught() async throws {
        // A named temporary file renamed over the old one: --force where O_TMPFILE is not used.
        let recorded = try await Self.record(setUp: { scratch in
            try writeFile(scratch.appending("in"), Self.bytes(9_000, seed: 1))
            try writeFile(scratch.appending("out"), Self.bytes(5_000, seed: 2))
        }) {
            var sink = FileSink.Options(replacesExisting: true)
            sink.closesSealedFile = true  // a named temporary file
            try await Self.copyFile($0, $1, options: Self.pipeline, sink: sink)
        }
        #expect(recorded.recorder.calls.contains("renameat2") || recorded.recorder.calls.contains("rename"))
        try Self.expectCaught("rename moved before the file's fsync", recorded, change: Self.moveNamingBeforeTheFileSync)
    }

    /// `--rm`'s unlink of a source moved before the batch's `syncfs(2)`: a crash can leave the
    /// source gone and its copy not yet named.
    @Test func plantedSourceUnlinkBeforeTheSyncIsCaught() async throws {
        let recorded = try await Self.recordSeveralFiles(removingSources: true)
        try Self.expectCaught("the source's unlink moved before the batch's syncfs", recorded) { operations, _ in
            let unlink = try #require(operations.firstIndex { $0.call == "unlinkat" && $0.domain == CrashModel.root })
            let syncfs = try #require(operations.firstIndex { $0.sync == .fileSystem })
            operations.insert(operations.remove(at: unlink), at: syncfs)
        }
    }

    /// Without the `fsync(2)` of the sources' directory after their removal (as `sluice` did
    /// before this was found), a crash after the command returned can bring a source back.
    @Test func removalsWithoutTheirDirectorySyncAreCaught() async throws {
        let recorded = try await Self.recordSeveralFiles(removingSources: true)
        try Self.expectCaught("the sources' directory fsync after their removal dropped", recorded) { operations, _ in
            let sync = try #require(operations.lastIndex { $0.sync == .node(CrashModel.root) })
            operations.remove(at: sync)
        }
    }

    @Test func plantedModeAfterTheCommitIsCaught() async throws {
        let recorded = try await Self.record(setUp: { scratch in
            try writeFile(scratch.appending("in"), Self.bytes(9_000, seed: 1))
            try writeFile(scratch.appending("out"), Self.bytes(5_000, seed: 2))
            chmod(scratch.appending("out").description, 0o640)
        }) {
            try await Self.copyFile($0, $1, options: Self.pipeline, sink: .init(replacesExisting: true))
        }
        try Self.expectCaught("fchmod moved after the commit", recorded) { operations, _ in
            let mode = try #require(operations.firstIndex { if case .mode = $0.effect { true } else { false } })
            let commit = try Self.naming("out", in: operations)
            operations.insert(operations[mode], at: commit + 1)
            operations.remove(at: mode)
        }
    }

    // MARK: Inputs

    static func writeSparse(_ path: Pathname) throws {
        let descriptor = try Descriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC, permissions: 0o644)
        defer { try? descriptor.close() }
        try bytes(8192, seed: 6).withUnsafeBytes { try descriptor.write(toAbsoluteOffset: 0, $0) }
        try bytes(4096, seed: 7).withUnsafeBytes { try descriptor.write(toAbsoluteOffset: 8192 + 65536, $0) }
        ftruncate(descriptor.rawValue, 8192 + 65536 + 4096 + 32768)
    }

    static func gzip(_ data: [UInt8]) async throws -> [UInt8] {
        var encoder: any ChunkTransform = try GzipEncoder(level: .default, outputChunkSize: 1 << 16)
        let output = LockedValue<[UInt8]>([])
        try await encoder.process(Chunk(data)) { chunk in output.withLock { $0 += chunk.bytes } }
        _ = try await encoder.finish { chunk in output.withLock { $0 += chunk.bytes } }
        return output.withLock { $0 }
    }

    static func recordSeveralFiles(removingSources: Bool = false) async throws -> Recorded {
        var recorded = try await record(setUp: { scratch in
            mkdir(scratch.appending("out").description, 0o755)
            for index in 0..<3 { try writeFile(scratch.appending(Pathname("in\(index)")), bytes(3000 + 2000 * index, seed: UInt8(index))) }
        }) { scratch, system in
            var options = Copier.Options(width: 2, chunkSize: chunkSize, copy: .init(forcesPipeline: true))
            options.syncBatchWaitMilliseconds = 600_000
            let engine = Copier(options: options, progress: ManyFilesProgress(), ownsProgress: true, system: system)
            let opened = LockedValue<[Int: FileStatus]>([:])
            for index in 0..<3 {
                let source = scratch.appending(Pathname("in\(index)"))
                try await engine.submit(.init(
                    source: source, destination: scratch.appending(Pathname("out/in\(index)")), sourceStatus: try FileStatus.of(source),
                    completion: { outcome in
                        let status = try? outcome.result.get().report.sourceStatus
                        opened.withLock { $0[index] = status ?? nil }
                    }))
            }
            let totals = await engine.finish()
            #expect(totals.committed == 3)
            guard removingSources else { return }
            // `--rm` as the command does it once the engine is finished (its directories
            // synced), by the same calls: each source removed by the rule of a move (its status
            // as when it was opened, a lease), then one fsync of their directory.
            let removals = DirectorySyncBatch(system: system)
            for index in 0..<3 {
                let status = try #require(opened.withLock { $0[index] })
                let outcome = SourceRemoval.remove(scratch.appending(Pathname("in\(index)")), opened: status, removals: removals, system: system)
                #expect(outcome.kept == nil, "\(outcome)")
            }
            #expect(removals.synchronize().isEmpty)
        }
        if removingSources {
            recorded.explorer.removals = (0..<3).map { (Array("in\($0)".utf8), Array("out/in\($0)".utf8)) }
        }
        return recorded
    }

    static func recordTree() async throws -> Recorded {
        try await record(setUp: { scratch in
            let source = scratch.appending("s")
            mkdir(source.description, 0o755)
            mkdir(source.appending("d").description, 0o750)
            try writeFile(source.appending("a"), bytes(5000, seed: 8))
            try writeFile(source.appending("d/b"), bytes(100, seed: 9))
            chmod(source.appending("d/b").description, 0o600)
            link(source.appending("a").description, source.appending("d/a-again").description)
            symlink("../a", source.appending("d/to-a").description)
            // Read-only once copied: its bits come last, after its entries.
            chmod(source.appending("d").description, 0o550)
        }) { scratch, system in
            // The batch's own wait, as `sluice copy -a`'s: the tree waits for its files to be
            // committed before its final pass, so they cannot wait for the copier's finish.
            var options = Copier.Options(width: 2)
            options.sink.preservesAttributes = true
            let copied = try await copyTreeWithCopier(
                scratch.appending("s"), to: scratch.appending("t"), tree: .init(keepsHardLinks: true), options: options,
                system: system)
            #expect(copied.report.failures == 0 && copied.failures.isEmpty)
        }
    }
}
