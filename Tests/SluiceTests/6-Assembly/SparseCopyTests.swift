#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Sluice
import SluiceTestSupport

/// A sparse source copied on each path keeps its holes and its exact size: the pipeline
/// (forced), the kernel copy (the file system reported as XFS, the clone refused; on ext4 and
/// tmpfs the table takes it for a sparse source anyway). Each test names its path.
@Suite(.timeLimit(.minutes(3)))
struct SparseCopyTests {
    static let size: Int64 = 64 << 20
    static let extents: [(offset: Int64, bytes: [UInt8])] = [
        (1 << 20, randomBytes(count: 64 << 10, seed: 11)),
        (20 << 20, randomBytes(count: 64 << 10, seed: 12)),
        (40 << 20, randomBytes(count: 64 << 10, seed: 13)),
    ]

    @Test func theTableCopiesASparseSourceInTheKernel() async throws {
        try await withScratchDirectory { directory in
            let sourcePath = directory.appending("source")
            try writeSparseFile(sourcePath, size: Self.size, extents: Self.extents)
            let type = try directory.fileSystemType()
            try #require(!CopyMethod.cloningFileSystems.contains(type), "this test needs a file system that does not clone")
            let source = try await FileChunks.open(sourcePath)
            let sink = try await FileSink.create(at: directory.appending("copy"), source: source, options: .init(synchronizes: false))
            let report = try await RegularFileCopy(from: source, to: sink).run()
            #expect(report.method == .kernelCopy)
            // 64 MiB read and compared on a thread of its own, not the cooperative pool.
            let copy = directory.appending("copy")
            #expect(try await onOwnThread { try readFile(copy) == sparseContent(size: Self.size, extents: Self.extents) })
            #expect(try allocatedBytes(directory.appending("copy")) <= (try allocatedBytes(sourcePath)) + (1 << 20))
        }
    }

    @Test(arguments: [CopyMethod.pipeline, .kernelCopy])
    func holesStayHoles(path: CopyMethod) async throws {
        try await withScratchDirectory { directory in
            let sourcePath = directory.appending("source")
            let destination = directory.appending("copy")
            try writeSparseFile(sourcePath, size: Self.size, extents: Self.extents)
            let calls = path == .kernelCopy ? KernelCalls(fileSystem: .xfs, clone: .notSupported) : KernelCalls()
            let source = try await FileChunks.open(
                sourcePath, descriptor: nil, ownsDescriptor: true, chunkSize: 1 << 20, system: calls.system)
            let sink = try await FileSink.create(
                at: FileLocation(path: destination), source: source.status, options: .init(synchronizes: false), system: calls.system)
            let report = try await RegularFileCopy(from: source, to: sink, options: .init(forcesPipeline: path == .pipeline)).run()
            #expect(report.method == path)
            // 64 MiB made, read and compared on a thread of its own, not the cooperative pool.
            let (matches, crc) = try await onOwnThread { () -> (Bool, UInt32) in
                let content = sparseContent(size: Self.size, extents: Self.extents)
                return (try readFile(destination) == content, CRC32(content).value)
            }
            #expect(matches)
            #expect(try FileStatus.of(destination).size == Self.size)
            #expect(try allocatedBytes(destination) <= (try allocatedBytes(sourcePath)) + (1 << 20))
            #expect(report.bytesRead == Self.size)
            // Holes count in the CRC-32 as their zeros.
            #expect(report.crc32 == (path == .pipeline ? crc : nil))
        }
    }

    /// Even where the table would copy in the kernel (NFS, or a sparse source on ext4): a hole
    /// the options forbid is the pipeline's, which writes the zeros.
    @Test func sparseNeverAllocatesEveryBlock() async throws {
        try await withScratchDirectory { directory in
            let sourcePath = directory.appending("source")
            let destination = directory.appending("copy")
            try writeSparseFile(sourcePath, size: 8 << 20, extents: [(0, randomBytes(count: 4096, seed: 1))])
            let calls = KernelCalls(fileSystem: .nfs)
            let source = try await FileChunks.open(
                sourcePath, descriptor: nil, ownsDescriptor: true, chunkSize: 1 << 20, findsHoles: false, system: calls.system)
            let sink = try await FileSink.create(
                at: FileLocation(path: destination), source: source.status, options: .init(synchronizes: false, holes: .never), system: calls.system)
            let report = try await RegularFileCopy(from: source, to: sink, options: .init(holes: .never, sliceSize: RegularFileCopy.Options.defaultSliceSize)).run()
            #expect(report.method == .pipeline)
            #expect(try readFile(destination) == (try readFile(sourcePath)))
            #expect(try allocatedBytes(destination) >= 8 << 20)
        }
    }
}
