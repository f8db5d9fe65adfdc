import Sluice

/// The identities (device and inode) of the files one command has created. Its transfers share
/// it, and a transfer is held by its job's completion on an engine thread: one lock.
final class CreatedFiles: Sendable {
    private let identities = LockedValue<Set<FileIdentity>>([])

    func insert(_ status: FileStatus) {
        _ = identities.withLock { $0.insert(status.identity) }
    }

    func contains(_ status: FileStatus) -> Bool {
        identities.withLock { $0.contains(status.identity) }
    }
}
