/// The kind of file system that holds a file: the magic number `fstatfs(2)` reports in
/// `f_type` (the values of `<linux/magic.h>`, listed in statfs(2)).
///
/// The copy paths are chosen by it (see the Copy paths article): whether the file system can
/// share extents between files (a clone), and whether the kernel copies faster than Sluice's
/// own pipeline.
///
/// Concurrency: a plain value; `Sendable`.
package struct FileSystemType: Sendable, Hashable, CustomStringConvertible {
    /// The magic number, as `f_type` holds it.
    package var rawValue: UInt32

    /// Wraps a magic number.
    package init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// ext2, ext3 and ext4 (`EXT4_SUPER_MAGIC`, `0xEF53`): no clones.
    package static let ext4 = FileSystemType(rawValue: 0xEF53)
    /// XFS (`XFS_SUPER_MAGIC`); clones where it was made with `-m reflink=1` (the default of
    /// mkfs.xfs since xfsprogs 5.1).
    package static let xfs = FileSystemType(rawValue: 0x5846_5342)
    /// Btrfs (`BTRFS_SUPER_MAGIC`): clones.
    package static let btrfs = FileSystemType(rawValue: 0x9123_683E)
    /// bcachefs: clones.
    package static let bcachefs = FileSystemType(rawValue: 0xCA45_1A4E)
    /// OCFS2: clones.
    package static let ocfs2 = FileSystemType(rawValue: 0x7461_636F)
    /// tmpfs and shmem (`TMPFS_MAGIC`).
    package static let tmpfs = FileSystemType(rawValue: 0x0102_1994)
    /// procfs (`PROC_SUPER_MAGIC`): sizes that say 0.
    package static let proc = FileSystemType(rawValue: 0x9FA0)
    /// sysfs (`SYSFS_MAGIC`): sizes that say 4096.
    package static let sysfs = FileSystemType(rawValue: 0x6265_6572)
    /// NFS (`NFS_SUPER_MAGIC`).
    package static let nfs = FileSystemType(rawValue: 0x6969)
    /// overlayfs (`OVERLAYFS_SUPER_MAGIC`).
    package static let overlay = FileSystemType(rawValue: 0x794C_7630)
    /// FUSE (`FUSE_SUPER_MAGIC`): `syncfs(2)` makes nothing durable unless its server implements
    /// it, so each file is `fsync(2)`ed.
    package static let fuse = FileSystemType(rawValue: 0x6573_5546)

    private static let names: [FileSystemType: String] = [
        .ext4: "ext4", .xfs: "xfs", .btrfs: "btrfs", .bcachefs: "bcachefs", .ocfs2: "ocfs2", .tmpfs: "tmpfs",
        .proc: "proc", .sysfs: "sysfs", .nfs: "nfs", .overlay: "overlay", .fuse: "fuse",
    ]

    /// The file system's name (`xfs`), or its magic number in hexadecimal when it is not one
    /// of the above.
    package var description: String {
        Self.names[self] ?? "0x" + String(rawValue, radix: 16)
    }
}
