import Sluice

/// The identities (device and inode) of the files one command has created.
final class CreatedFiles {
    private struct Identity: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    private var identities: Set<Identity> = []

    func insert(_ status: FileStatus) {
        identities.insert(Identity(device: status.device, inode: status.inode))
    }

    func contains(_ status: FileStatus) -> Bool {
        identities.contains(Identity(device: status.device, inode: status.inode))
    }
}
