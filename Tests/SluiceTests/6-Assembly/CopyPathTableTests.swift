#if canImport(Glibc)
import Glibc
#endif
import SluiceTestSupport
import Testing
@testable import Sluice

/// The path table: fixed by the file systems' types, the source's kind and the options.
@Suite struct CopyPathTableTests {
    static func status(kind: FileStatus.Kind = .regular, size: Int64 = 1 << 20, allocated: Int64? = nil) throws -> FileStatus {
        var status = try FileStatus.of("/")
        status.kind = kind
        status.size = size
        status.allocatedBytes = allocated ?? size
        return status
    }

    static func chain(
        _ source: FileSystemType, _ destination: FileSystemType, reflink: Copier.ReflinkMode = .auto,
        holes: FileChunks.HoleMode = .auto, kind: FileStatus.Kind = .regular, size: Int64 = 1 << 20, allocated: Int64? = nil,
        kernelCopyLimit: Int64 = 0, verified: Bool = false
    ) throws -> [CopyMethod] {
        CopyMethod.chain(
            source: try status(kind: kind, size: size, allocated: allocated), sourceFileSystem: source, destinationFileSystem: destination,
            reflink: reflink, holes: holes, kernelCopyLimit: kernelCopyLimit, verified: verified)
    }

    @Test(arguments: [FileSystemType.xfs, .btrfs])
    func cloningFileSystemsCloneThenCopyInTheKernelThenPipe(type: FileSystemType) throws {
        #expect(try Self.chain(type, type) == [.clone, .kernelCopy, .pipeline])
        #expect(try Self.chain(type, type, reflink: .always) == [.clone])
        // Within a cloning file system copy_file_range shares extents too.
        #expect(try Self.chain(type, type, reflink: .never) == [.pipeline])
    }

    @Test(arguments: [FileSystemType.ext4, .tmpfs])
    func ext4AndTmpfsCopyInTheKernel(type: FileSystemType) throws {
        #expect(try Self.chain(type, type) == [.kernelCopy, .pipeline])
        #expect(try Self.chain(type, type, reflink: .never) == [.kernelCopy, .pipeline])
        #expect(try Self.chain(type, type, reflink: .always) == [])
        #expect(try Self.chain(type, type, holes: .never) == [.pipeline])
        #expect(try Self.chain(type, type, holes: .always) == [.pipeline])
        #expect(try Self.chain(type, type, size: 0) == [.pipeline])
    }

    /// A verified copy of a dense file reads its data once through the pipeline rather than
    /// twice after a kernel copy; a sparse one keeps the kernel copy of its few extents, and on
    /// NFS the kernel copy is the server's.
    @Test(arguments: [FileSystemType.ext4, .tmpfs])
    func aVerifiedDenseCopyOnExt4OrTmpfsTakesThePipeline(type: FileSystemType) throws {
        #expect(try Self.chain(type, type, verified: true) == [.pipeline])
        #expect(try Self.chain(type, type, allocated: 64 << 10, verified: true) == [.kernelCopy, .pipeline])
        #expect(try Self.chain(.nfs, .nfs, verified: true) == [.kernelCopy, .pipeline])
        #expect(try Self.chain(.xfs, .xfs, verified: true) == [.clone, .kernelCopy, .pipeline])
    }

    @Test func aFileSystemNotInTheTableUsesThePipeline() throws {
        let other = FileSystemType(rawValue: 0xF2F5_2010)  // F2FS
        #expect(try Self.chain(other, other) == [.pipeline])
        #expect(try Self.chain(other, other, allocated: 64 << 10) == [.kernelCopy, .pipeline])
    }

    @Test(arguments: [FileSystemType.ext4, .tmpfs])
    func aSparseSourceIsCopiedInTheKernelExtentByExtent(type: FileSystemType) throws {
        #expect(try Self.chain(type, type, allocated: 64 << 10) == [.kernelCopy, .pipeline])
        #expect(try Self.chain(type, type, reflink: .never, allocated: 64 << 10) == [.kernelCopy, .pipeline])
        #expect(try Self.chain(type, type, holes: .never, allocated: 64 << 10) == [.pipeline])
        #expect(try Self.chain(type, type, holes: .always, allocated: 64 << 10) == [.pipeline])
        // Within a cloning file system copy_file_range shares extents: not with never.
        #expect(try Self.chain(.xfs, .xfs, reflink: .never, allocated: 64 << 10) == [.pipeline])
        #expect(try Self.chain(.ext4, .tmpfs, allocated: 64 << 10) == [.pipeline])
    }

    /// On a file system the table does not name (F2FS here), where a large file takes the pipeline.
    @Test func aFileUpToTheKernelCopyLimitIsCopiedInTheKernel() throws {
        let type = FileSystemType(rawValue: 0xF2F5_2010)
        let limit: Int64 = 64 << 10
        #expect(try Self.chain(type, type, size: limit, kernelCopyLimit: limit) == [.kernelCopy, .pipeline])
        #expect(try Self.chain(type, type, reflink: .never, size: 1, kernelCopyLimit: limit) == [.kernelCopy, .pipeline])
        #expect(try Self.chain(type, type, size: limit + 1, kernelCopyLimit: limit) == [.pipeline])
        #expect(try Self.chain(type, type, holes: .always, size: 1, kernelCopyLimit: limit) == [.pipeline])
        #expect(try Self.chain(type, type, size: 0, kernelCopyLimit: limit) == [.pipeline])
        #expect(try Self.chain(.ext4, .tmpfs, size: 1, kernelCopyLimit: limit) == [.pipeline])
        // Within a cloning file system copy_file_range would share extents: not with never.
        #expect(try Self.chain(.xfs, .xfs, reflink: .never, size: 1, kernelCopyLimit: limit) == [.pipeline])
        #expect(try Self.chain(.xfs, .xfs, size: 1, kernelCopyLimit: limit) == [.clone, .kernelCopy, .pipeline])
    }

    @Test func nfsCopiesInTheKernel() throws {
        #expect(try Self.chain(.nfs, .nfs) == [.kernelCopy, .pipeline])
        #expect(try Self.chain(.nfs, .nfs, reflink: .never) == [.kernelCopy, .pipeline])
    }

    @Test func differentFileSystemsUseThePipeline() throws {
        #expect(try Self.chain(.xfs, .btrfs) == [.pipeline])
        #expect(try Self.chain(.ext4, .xfs) == [.pipeline])
        #expect(try Self.chain(.xfs, .ext4, reflink: .always) == [])
    }

    @Test(arguments: [FileSystemType.proc, .sysfs])
    func pseudoFilesUseThePipeline(type: FileSystemType) throws {
        #expect(try Self.chain(type, .ext4) == [.pipeline])
        #expect(try Self.chain(type, type) == [.pipeline])
    }

    @Test func emptyOrIrregularSourcesUseThePipeline() throws {
        #expect(try Self.chain(.xfs, .xfs, size: 0) == [.pipeline])
        #expect(try Self.chain(.xfs, .xfs, kind: .fifo) == [.pipeline])
        #expect(try Self.chain(.xfs, .xfs, reflink: .always, kind: .fifo) == [])
    }

    @Test(arguments: [FileChunks.HoleMode.always, .never])
    func aClonePreservesHolesAndZerosAsTheyAre(holes: FileChunks.HoleMode) throws {
        #expect(try Self.chain(.xfs, .xfs, holes: holes) == [.pipeline])
        #expect(try Self.chain(.xfs, .xfs, reflink: .always, holes: holes) == [])
    }

    @Test func theListedErrnosGiveWay() {
        for errno in [
            ErrorNumber.improperLink, .notSupported, .invalidArgument, .noFunction, .inappropriateIOCTLForDevice, .notPermitted, .textFileBusy,
        ] {
            #expect(CopyMethod.givesWay(on: errno), "\(errno)")
        }
        for errno in [ErrorNumber.ioError, .noSpace, .permissionDenied, .badFileDescriptor] {
            #expect(!CopyMethod.givesWay(on: errno), "\(errno)")
        }
    }
}
