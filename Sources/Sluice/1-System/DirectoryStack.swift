/// The chain of directories from a root down to the one being worked in, holding at most a
/// fixed number of their descriptors open, whatever the depth.
///
/// Going down (``push(_:name:)``) keeps the new directory open and closes the shallowest open
/// one past ``maximumOpen`` (never the root). Coming back up (``pop()``) to a directory whose
/// descriptor was closed reopens it as `fts(3)` does: `openat(2)` of the child's `..`, checked
/// against the device and inode recorded on the way down; when that fails or finds another
/// directory (the tree was moved meanwhile), it descends again from the nearest open ancestor
/// by the recorded names, checking each; a directory that cannot be found again is reported
/// with ``FileError/directoryChanged(_:file:line:)``. Memory per level: its name, its device
/// and inode, and a reference.
///
/// Concurrency contract: a value type for one task; its calls block (run them on a
/// `BlockingIOExecutor`).
package struct DirectoryStack: Sendable {
    struct Level: Sendable {
        var name: Pathname
        var path: Pathname
        var device: UInt64
        var inode: UInt64
        var handle: DirectoryHandle?
    }

    private(set) var levels: [Level]
    /// The most descriptors kept open, the root's included; at least 2.
    package let maximumOpen: Int

    /// Starts at `root`, which stays open until the stack goes away.
    ///
    /// - Parameters:
    ///   - root: the top of the chain; its `DirectoryHandle/path` names the levels below.
    ///   - maximumOpen: the bound on open descriptors; default 32.
    /// - Throws: ``FileError`` from `fstat(2)` of the root.
    package init(root: DirectoryHandle, maximumOpen: Int = 32) throws(FileError) {
        precondition(maximumOpen >= 2, "a directory stack keeps at least 2 descriptors")
        let status = try root.status()
        self.levels = [Level(name: root.path, path: root.path, device: status.device, inode: status.inode, handle: root)]
        self.maximumOpen = maximumOpen
    }

    /// How many directories below the root the top is (0 at the root).
    package var depth: Int { levels.count - 1 }

    /// The directory being worked in (always open).
    package var top: DirectoryHandle { levels[levels.count - 1].handle! }

    /// The count of descriptors the stack holds now.
    package var openCount: Int { levels.count { $0.handle != nil } }

    /// Whether a directory of the chain (the top included) is the file `device`/`inode`.
    package func contains(device: UInt64, inode: UInt64) -> Bool {
        path(ofDevice: device, inode: inode) != nil
    }

    /// The path of the directory of the chain (the top included) that is the file
    /// `device`/`inode`, or `nil` when none is.
    ///
    /// - Complexity: O(depth).
    func path(ofDevice device: UInt64, inode: UInt64) -> Pathname? {
        levels.first { $0.device == device && $0.inode == inode }?.path
    }

    /// Goes down into `handle`, the directory `name` of the top.
    ///
    /// - Throws: ``FileError`` from `fstat(2)` of the new directory.
    package mutating func push(_ handle: DirectoryHandle, name: Pathname) throws(FileError) {
        let status = try handle.status()
        levels.append(Level(name: name, path: handle.path, device: status.device, inode: status.inode, handle: handle))
        let closing = levels.count - maximumOpen
        if closing >= 1 { levels[closing].handle = nil }
    }

    /// Goes back up to the parent of the top, reopening it if its descriptor was closed.
    ///
    /// - Throws: ``FileError``: `directoryChanged` when the parent cannot be found again (the
    ///   stack is then one level up, with that level closed: a later ``pop()`` still works); the
    ///   errors of `openat(2)`.
    package mutating func pop() throws(FileError) {
        try pop(releasingDescriptors: { false })
    }

    /// ``pop()``, where an open that fails for want of descriptors (`EMFILE`) is tried again
    /// each time `release` frees some (``DescriptorBudget/retrying(whileReleasing:_:)``).
    ///
    /// - Throws: as ``pop()``.
    mutating func pop(releasingDescriptors release: () -> Bool) throws(FileError) {
        precondition(levels.count > 1, "DirectoryStack.pop at the root")
        let child = levels.removeLast().handle
        let index = levels.count - 1
        guard levels[index].handle == nil else { return }
        if let child {
            let path = levels[index].path
            let reopened = Result { () throws(FileError) in
                try DescriptorBudget.retrying(whileReleasing: release) { () throws(FileError) in try child.openDirectory("..", path: path) }
            }
            if case .success(let handle) = reopened, matches(handle, index) {
                levels[index].handle = handle
                return
            }
            if case .failure(let error) = reopened, error.isDescriptorExhaustion { throw error }
        }
        try reopenFromAncestor(index, release)
    }

    /// Reopens level `index` by descending from the nearest open level above it.
    private mutating func reopenFromAncestor(_ index: Int, _ release: () -> Bool) throws(FileError) {
        var open = index - 1
        while levels[open].handle == nil { open -= 1 }
        var handle = levels[open].handle!
        for level in (open + 1)...index {
            let (name, path) = (levels[level].name, levels[level].path)
            let parent = handle
            let next = try DescriptorBudget.retrying(whileReleasing: release) { () throws(FileError) in
                try parent.openDirectory(name, path: path)
            }
            guard matches(next, level) else { throw FileError.directoryChanged(levels[level].path) }
            handle = next
        }
        levels[index].handle = handle
    }

    private func matches(_ handle: DirectoryHandle, _ index: Int) -> Bool {
        guard let status = try? handle.status() else { return false }
        return status.device == levels[index].device && status.inode == levels[index].inode
    }
}
