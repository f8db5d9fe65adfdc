import Sluice

/// The identities (device and inode) of the files one command has created. Its transfers share
/// it, and a transfer is held by its job's completion on an engine thread: one lock.
final class CreatedFiles: Sendable {
    private struct Identity: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    private let identities = LockedValue<Set<Identity>>([])

    func insert(_ status: FileStatus) {
        _ = identities.withLock { $0.insert(Identity(device: status.device, inode: status.inode)) }
    }

    func contains(_ status: FileStatus) -> Bool {
        identities.withLock { $0.contains(Identity(device: status.device, inode: status.inode)) }
    }
}
