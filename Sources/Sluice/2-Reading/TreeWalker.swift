/// A walk of a directory tree in depth-first order, relative to directory descriptors, with
/// unbounded depth and a bounded count of open descriptors.
///
/// As `fts(3)` does it: each directory's names are read when it is entered (memory per
/// directory being walked: its names), every entry is looked up with `fstatat(2)` in its
/// directory's descriptor, and at most ``maximumOpenDirectories`` descriptors are open
/// (`DirectoryStack`): coming back to a directory whose descriptor was closed reopens it
/// through its child's `..` and checks its device and inode. No system call is given a path
/// longer than one component (the root's path excepted), so depth is not limited by `PATH_MAX`.
///
/// An entry that fails is reported (``Event/failure(_:)``) and the walk goes on: the walk
/// itself never throws. Entries come in the order the file system lists them.
///
/// A directory is never entered twice on one path: one that is a directory of the current
/// path (reached again through a followed link, or a bind mount, which makes a tree a graph)
/// is reported as `FileError.directoryCycle(_:ancestor:file:line:)`, and one a copy refused
/// (its own directories) as
/// `FileError.copyIntoItself(source:destination:file:line:)`, each by its device and inode,
/// before it is opened. So no walk recurses without end.
///
/// ```swift
/// var walker = TreeWalker(root: "photos")
/// while let event = walker.next() {
///     if case .file(let entry) = event { print(entry.path) }
/// }
/// ```
///
/// Concurrency contract: a value for one task; ``next()`` blocks on system calls, so run it
/// on a `BlockingIOExecutor`, never on the cooperative pool.
package struct TreeWalker: Sendable {
    /// A directory being walked. It keeps no descriptor of its own: its ``Entry``'s parent is
    /// taken from the stack when it is left, so the directories above it can be closed.
    private struct Frame: Sendable {
        var name: Pathname
        var path: Pathname
        var relativePath: Pathname
        var status: FileStatus
        var depth: Int
        var names: [Pathname]
        var next = 0
        var skipsRest = false

        init(_ entry: Entry, names: [Pathname]) {
            (name, path, relativePath, status, depth) = (entry.name, entry.path, entry.relativePath, entry.status, entry.depth)
            self.names = names
        }

        /// The entry again, in `parent`.
        func entry(in parent: DirectoryHandle) -> Entry {
            Entry(parent: parent, name: name, path: path, relativePath: relativePath, status: status, depth: depth)
        }
    }

    /// The path the walk starts at, as given.
    package let root: Pathname
    /// Whether every symbolic link is walked as what it leads to (`-L`).
    package let followsLinks: Bool
    /// Whether a root that is a symbolic link is walked as what it leads to (`-H`; implied by
    /// ``followsLinks``).
    package let followsRootLink: Bool
    /// The most directory descriptors the walk holds open (at least 2).
    package let maximumOpenDirectories: Int

    private var started = false
    /// The directories refused wherever they are met, with the path each is named by.
    private var refused: [FileIdentity: Pathname] = [:]
    /// The directory that holds the root: the parent of the root's entry.
    private var rootParent: DirectoryHandle?
    private var stack: DirectoryStack?
    private var frames: [Frame] = []
    private var pending: [Event] = []

    /// Called when an open of the walk fails for want of descriptors (`EMFILE`, `ENFILE`):
    /// frees descriptors the caller holds and will release (a copy's files in flight) and
    /// returns whether it did, the open then being tried again; `nil` (the default): the entry
    /// fails. It blocks the walk's thread.
    var releasesDescriptors: (@Sendable () -> Bool)?

    /// Called before the walk opens a directory (to enter it, or to go back up to its parent),
    /// on the walk's thread; it may block. A copy under a very low limit on open files waits
    /// there until no file of its own holds descriptors, so that each file's directories are
    /// the walk's own (`DescriptorBudget.copiesOneFileAtATime`); `nil` (the default): nothing.
    var beforeOpeningDirectory: (@Sendable () -> Void)?

    /// ``releasesDescriptors``, or "none released".
    private var release: @Sendable () -> Bool { releasesDescriptors ?? { false } }

    /// Prepares a walk; nothing is opened until ``next()``.
    ///
    /// - Parameters:
    ///   - root: the directory (or single file) to walk.
    ///   - followsLinks: whether every symbolic link is followed (`-L`); default none.
    ///   - followsRootLink: whether a root that is a link is followed (`-H`); default no.
    ///   - maximumOpenDirectories: the bound on open descriptors; default 32.
    package init(root: Pathname, followsLinks: Bool = false, followsRootLink: Bool = false, maximumOpenDirectories: Int = 32) {
        precondition(maximumOpenDirectories >= 2, "a walk needs at least 2 directory descriptors")
        self.root = root
        self.followsLinks = followsLinks
        self.followsRootLink = followsRootLink || followsLinks
        self.maximumOpenDirectories = maximumOpenDirectories
    }

    /// The system calls of the walk's directories (the seam for tests): real by default.
    var system: SystemCalls = .live

    /// Whether a root that is a symbolic link is followed: with ``followsRootLink`` or
    /// ``followsLinks``, and whenever the root ends in a slash (`link/`), which POSIX path
    /// resolution resolves through the link, as `cp -r link/ x` and `rsync -r link/ x` do.
    private var followsRoot: Bool { followsRootLink || root.bytes.last == UInt8(ascii: "/") }

    /// The count of directory descriptors the walk holds now (the root's parent excepted).
    package var openDirectoryCount: Int { stack?.openCount ?? 0 }

    /// Skips the remaining entries of the directory entered last: its ``Event/leaveDirectory(_:)``
    /// comes next. For a caller that cannot copy a directory's contents (its copy could not be
    /// created).
    package mutating func skipCurrentDirectory() {
        guard !frames.isEmpty else { return }
        frames[frames.count - 1].skipsRest = true
    }

    /// Refuses, from now on, to enter the directory `device`/`inode` wherever the walk meets
    /// it: it is reported as `FileError.copyIntoItself(source:destination:file:line:)`
    /// naming `destination`, and nothing in it is read. For a copy of the tree: the
    /// directories it made or merged into and the destination's parents, which a bind mount
    /// or a followed link could bring into the source.
    ///
    /// - Parameters:
    ///   - device: the directory's `st_dev`.
    ///   - inode: the directory's `st_ino`.
    ///   - destination: the path messages name it by.
    /// - Complexity: O(1); memory: about 40 bytes and the path per directory refused.
    package mutating func refuseToEnter(device: UInt64, inode: UInt64, as destination: Pathname) {
        refused[FileIdentity(device: device, inode: inode)] = destination
    }

    /// The next event, or `nil` once the walk is over.
    package mutating func next() -> Event? {
        if !pending.isEmpty { return pending.removeFirst() }
        if !started {
            started = true
            return startAtRoot()
        }
        while let frame = frames.last {
            if !frame.skipsRest && frame.next < frame.names.count {
                let name = frame.names[frame.next]
                frames[frames.count - 1].next += 1
                return visit(name, in: frame)
            }
            frames.removeLast()
            var parent = rootParent!
            if !frames.isEmpty {
                beforeOpeningDirectory?()
                do {
                    try stack!.pop(releasingDescriptors: release)
                    parent = stack!.top
                } catch {
                    // The parent cannot be found again: its other entries are lost.
                    frames[frames.count - 1].skipsRest = true
                    pending.append(.failure(error))
                }
            }
            return .leaveDirectory(frame.entry(in: parent))
        }
        return nil
    }

    private mutating func startAtRoot() -> Event? {
        let parent: DirectoryHandle
        do { parent = try DirectoryHandle.open(root.directory, system: system) } catch { return .failure(error) }
        rootParent = parent
        let name = root.lastComponent
        let status: FileStatus
        do { status = try parent.status(of: name, followsLinks: followsRoot) } catch {
            return .failure(FileError(code: error.code, operation: error.operation, path: root, errno: error.errno))
        }
        let entry = Entry(parent: parent, name: name, path: root, relativePath: Pathname(bytes: []), status: status, depth: 0)
        return status.kind == .directory ? enter(entry) : .file(entry)
    }

    private mutating func visit(_ name: Pathname, in directory: Frame) -> Event {
        let parent = stack!.top
        let path = directory.path.appending(name)
        let status: FileStatus
        do { status = try parent.status(of: name, followsLinks: followsLinks) } catch { return .failure(error) }
        let entry = Entry(
            parent: parent, name: name, path: path, relativePath: directory.relativePath.appending(name), status: status,
            depth: directory.depth + 1)
        return status.kind == .directory ? enter(entry) : .file(entry)
    }

    /// Why the directory `entry` is not entered: it is a directory of the current path, or
    /// one refused; `nil` when it may be entered.
    private func refusal(of entry: Entry) -> FileError? {
        let (device, inode) = (entry.status.device, entry.status.inode)
        if let ancestor = stack?.path(ofDevice: device, inode: inode) { return .directoryCycle(entry.path, ancestor: ancestor) }
        if let destination = refused[FileIdentity(device: device, inode: inode)] {
            return .copyIntoItself(source: entry.path, destination: destination)
        }
        return nil
    }

    private mutating func enter(_ entry: Entry) -> Event {
        if let refusal = refusal(of: entry) { return .failure(refusal) }
        let follows = entry.depth == 0 ? followsRoot : followsLinks
        let handle: DirectoryHandle
        let names: [Pathname]
        beforeOpeningDirectory?()
        do {
            let parent = entry.parent
            handle = try DescriptorBudget.retrying(whileReleasing: release) { () throws(FileError) in
                try parent.openDirectory(entry.name, path: entry.path, followsLinks: follows)
            }
            let opened = try handle.status()
            guard opened.isSameFile(as: entry.status) else { return .failure(.directoryChanged(entry.path)) }
            let listed = handle
            names = try DescriptorBudget.retrying(whileReleasing: release) { () throws(FileError) in try listed.entryNames() }
            if stack == nil {
                stack = try DirectoryStack(root: handle, maximumOpen: maximumOpenDirectories)
            } else {
                try stack!.push(handle, name: entry.name)
            }
        } catch where error.errno == .permissionDenied {
            return .unreadableDirectory(entry, error)
        } catch {
            return .failure(error)
        }
        frames.append(Frame(entry, names: names))
        return .enterDirectory(entry, handle)
    }
}
