/// The path table: which paths a copy of a regular file tries, in order, decided from the
/// file systems' types (`fstatfs(2)`) and the options alone, never by probing. The Copy paths
/// article gives the measurements behind it.
extension CopyMethod {
    /// File systems that share extents between files: `FICLONE` works there (XFS made with
    /// `-m reflink=1`, the default since xfsprogs 5.1), and `copy_file_range(2)` within one of
    /// them clones as well.
    package static let cloningFileSystems: Set<FileSystemType> = [.xfs, .btrfs, .bcachefs, .ocfs2]

    /// File systems where `copy_file_range(2)` is the fast copy without a clone, as `cp` uses it:
    /// - NFS: a copy on the server (NFS 4.2 `COPY`) instead of every byte crossing the network
    ///   twice;
    /// - ext4 and tmpfs: one copy inside the kernel (a splice through the page cache) instead of
    ///   the pipeline's two (a read into Sluice's memory, a write out of it). Measured side by
    ///   side, 1 GiB page-cached, `--no-fsync`: the same time as `cp` and a third of the
    ///   pipeline's processor time (the Copy paths article).
    package static let kernelCopyFileSystems: Set<FileSystemType> = [.nfs, .ext4, .tmpfs]

    /// File systems where a kernel copy passes the data through this machine's memory (a splice
    /// through the page cache): there a verified copy (``PipelineOptions/verifiesOutput``) of a dense
    /// file takes the pipeline, which checks what it wrote against what it read, instead of a
    /// kernel copy that must read the source a second time for its CRC-32 (measured: 1 GiB
    /// `--verify`, the pipeline 3.6 s, the kernel copy 4.4 s).
    package static let localKernelCopyFileSystems: Set<FileSystemType> = [.ext4, .tmpfs]

    /// File systems whose sizes say nothing of their content (/proc reports 0, /sys 4096), and
    /// whose files `copy_file_range(2)` refuses or copies short: always the pipeline, which
    /// reads to the end of file.
    package static let pseudoFileSystems: Set<FileSystemType> = [.proc, .sysfs]

    /// The paths to try, in order, for a regular source on `sourceFileSystem` to a regular
    /// destination on `destinationFileSystem`. Each but the last gives way to the next when the
    /// kernel refuses it (`EXDEV`, `EOPNOTSUPP`, `EINVAL`, `ENOSYS`, `ENOTTY`, `EPERM`, `ETXTBSY`, or a
    /// `copy_file_range(2)` that copies nothing before the source's reported size).
    ///
    /// - ``Copier/ReflinkMode/always``: ``clone`` alone (and nothing at all where the file system
    ///   cannot clone, or `holes` is not ``FileChunks/HoleMode/auto``: a clone keeps the source's
    ///   holes and zeros exactly as they are).
    /// - A cloning file system on both sides, with ``Copier/ReflinkMode/auto`` and
    ///   ``FileChunks/HoleMode/auto``: ``clone``, then ``kernelCopy``, then ``pipeline``.
    /// - ``kernelCopyFileSystems`` (ext4, tmpfs, NFS) on both sides, with ``FileChunks/HoleMode/auto``:
    ///   ``kernelCopy``, then ``pipeline``; but a dense source `verified` on
    ///   ``localKernelCopyFileSystems`` (ext4, tmpfs): ``pipeline``.
    /// - A sparse source (fewer bytes allocated than its size, `FileStatus.allocatedBytes`)
    ///   on any other file system, the same on both sides, with ``FileChunks/HoleMode/auto``:
    ///   ``kernelCopy`` (the data extents alone, one `copy_file_range(2)` each, as `cp` copies
    ///   them; the pipeline pays two chunks per extent), then ``pipeline``.
    /// - A source of at most `kernelCopyLimit` bytes on any other file system, the same on
    ///   both sides, with ``FileChunks/HoleMode/auto``: ``kernelCopy``, then ``pipeline``. One call
    ///   instead of a reader, a channel and a sink: what a small file of many costs
    ///   (``Copier`` sets the limit to its chunk size; one file alone keeps 0).
    /// - Anything else (two different file systems, /proc and /sys, a file system not named
    ///   here, a clone or a hole that the options forbid): ``pipeline``.
    ///
    /// - Parameters:
    ///   - source: the source's status (its kind, size and allocated bytes).
    ///   - sourceFileSystem: the source's file system (`fstatfs(2)`).
    ///   - destinationFileSystem: the destination's file system (its temporary file's).
    ///   - reflink: whether the destination may share the source's extents.
    ///   - holes: whether the destination gets holes.
    ///   - kernelCopyLimit: the largest file, in bytes, that goes by `copy_file_range(2)` where
    ///     the pipeline would be taken; 0 (default): none.
    ///   - verified: whether the copy is read back and checked (``PipelineOptions/verifiesOutput``).
    /// - Returns: the paths in order; empty when `reflink` is ``Copier/ReflinkMode/always`` and no
    ///   clone is possible.
    package static func chain(
        source: FileStatus, sourceFileSystem: FileSystemType, destinationFileSystem: FileSystemType,
        reflink: Copier.ReflinkMode, holes: FileChunks.HoleMode, kernelCopyLimit: Int64 = 0, verified: Bool = false
    ) -> [CopyMethod] {
        let sameType = sourceFileSystem == destinationFileSystem && !pseudoFileSystems.contains(sourceFileSystem)
        let canClone = source.kind == .regular && sameType && holes == .auto
            && cloningFileSystems.contains(destinationFileSystem)
        if reflink == .always { return canClone ? [.clone] : [] }
        // An empty file has nothing to gain from the kernel, and /proc files say 0.
        guard source.kind == .regular, source.size > 0, sameType, holes == .auto else { return [.pipeline] }
        if reflink == .auto && canClone { return [.clone, .kernelCopy, .pipeline] }
        // On a cloning file system copy_file_range would share extents: not with never.
        guard !cloningFileSystems.contains(destinationFileSystem) else { return [.pipeline] }
        let isSparse = source.mayHaveHoles
        if kernelCopyFileSystems.contains(destinationFileSystem) {
            // A verified copy reads the data anyway: the pipeline reads it once.
            let verifiesInMemory = verified && !isSparse && localKernelCopyFileSystems.contains(destinationFileSystem)
            return verifiesInMemory ? [.pipeline] : [.kernelCopy, .pipeline]
        }
        if isSparse || source.size <= kernelCopyLimit { return [.kernelCopy, .pipeline] }
        return [.pipeline]
    }

    /// Whether `errno` from a clone or a `copy_file_range(2)` means "not here": the next path
    /// of the chain is tried (``ErrorNumber/meansNotSupportedHere``).
    package static func givesWay(on errno: ErrorNumber) -> Bool {
        errno.meansNotSupportedHere
    }
}
