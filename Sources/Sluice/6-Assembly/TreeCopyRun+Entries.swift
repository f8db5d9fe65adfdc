#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Entries that are not directories: regular files go to the copier, the rest are recreated.
extension TreeCopyRun {
    func copyEntry(_ entry: TreeWalker.Entry) async throws {
        guard let (directory, name, path, record) = place(of: entry) else { return }
        let status = entry.status
        var identity: FileIdentity?
        if tree.keepsHardLinks, status.linkCount > 1, let record {
            guard firstNames[status.identity] == nil else {
                pendingLinks.append((status.identity, record, name))
                return
            }
            firstNames[status.identity] = (record, name)
            identity = status.identity
        }
        guard status.kind != .regular else {
            return try await submitFile(entry, to: FileLocation(name: name, in: directory, path: path), identity: identity)
        }
        // A symbolic link (its target as bytes) or a FIFO, device or socket (`mknodat(2)`).
        do {
            if status.kind == .symbolicLink {
                let target = try entry.parent.linkTarget(of: entry.name)
                try replacingExisting(name, in: directory) { try directory.makeSymbolicLink(name, target: target) }
            } else {
                let mode = Self.typeBits(status.kind) | mode_t(status.permissions & 0o7777)
                try replacingExisting(name, in: directory) { try directory.makeNode(name, mode: mode, device: status.representedDevice) }
            }
            directoriesWithNodes.insert(record)
            shared.withLock {
                if let identity { $0.copiedIdentities.insert(identity) }
                if status.kind == .symbolicLink { $0.tally.symbolicLinks += 1 } else { $0.tally.specialFiles += 1 }
            }
            if sink.preservesAttributes { try apply(status, attributes: attributes(of: entry), to: .entry(name, in: directory)) }
        } catch {
            fail(error)
        }
    }

    /// Hands a regular file to the copier as a job of its own, whose completion reports to the
    /// tally; `identity`, with `-a`, is the inode its other hard links are made from once it is
    /// copied. Every file found joins the copier's totals, which grow while the walk runs.
    ///
    /// - Throws: `CancellationError` when the copier was cancelled (the job was not taken).
    private func submitFile(_ entry: TreeWalker.Entry, to destination: FileLocation, identity: FileIdentity?) async throws {
        let follows = tree.links == .all || (entry.depth == 0 && tree.links == .root)
        let (shared, onFailure, onOutcome) = (shared, onFailure, onOutcome)
        var job = Copier.Job(
            source: entry.location, destination: destination, sourceStatus: entry.status, followsLinks: follows,
            completion: { [identity] outcome in
                onOutcome(outcome)
                let failure = shared.withLock { shared -> (any Error)? in
                    switch outcome.result {
                    case .success(let committed):
                        if let identity { shared.copiedIdentities.insert(identity) }
                        shared.tally.files += 1
                        shared.tally.bytes += committed.report.bytesRead
                        shared.tally.warnings += committed.report.warnings.map { "'\(destination.path)': \($0)" }
                    case .failure(let error) where error is CancellationError:
                        // Not copied, not failed: the copier was cancelled (copyTree then throws).
                        shared.tally.cancelled += 1
                    case .failure(let error):
                        shared.tally.failures += 1
                        return error
                    }
                    return nil
                }
                failure.map(onFailure)
                shared.withLock { $0.pendingJobs -= 1 }
            })
        // With `-a`, its extended attributes (and ACLs) too, set on its open temporary before
        // its commit point.
        job.sinkOverride = sink
        job.sinkOverride?.preservesExtendedAttributes = sink.preservesAttributes
        job.preservationWarnings = warnings
        // Not when the copier, given no totals, counts the jobs submitted itself.
        let addsToTotal = !copier.tracker.countsFiles
        if addsToTotal { copier.addToTotal(bytes: entry.status.knownSize ?? 0, files: 1) }
        shared.withLock { $0.pendingJobs += 1 }
        do {
            try await copier.submit(job)
        } catch {
            // Not taken: its completion is never called, and it is no file of the totals.
            if addsToTotal { copier.addToTotal(bytes: -(entry.status.knownSize ?? 0), files: -1) }
            shared.withLock { $0.pendingJobs -= 1 }
            throw error
        }
    }

    /// Runs `make`, which creates `name` in `directory`; with `--force`, a name taken by
    /// anything but a directory is removed first and `make` runs again, as `cp -f` replaces an
    /// existing link or node.
    ///
    /// - Throws: the error of `make` (`alreadyExists` without `--force`), or of the removal.
    func replacingExisting(_ name: Pathname, in directory: DirectoryHandle, _ make: () throws -> Void) throws {
        do {
            try make()
        } catch let error as FileError where error.errno == .fileExists && sink.replacesExisting {
            guard try directory.status(of: name, followsLinks: false).kind != .directory else { throw error }
            try directory.removeEntry(name, isDirectory: false)
            try make()
        }
    }

    /// The `S_IFMT` bits `mknodat(2)` takes for a kind of file.
    static func typeBits(_ kind: FileStatus.Kind) -> mode_t {
        switch kind {
        case .characterDevice: S_IFCHR
        case .blockDevice: S_IFBLK
        case .socket: S_IFSOCK
        default: S_IFIFO
        }
    }

    /// The extended attributes (and ACLs) of `entry` in the source, for `--preserve`; `nil`
    /// when they cannot be read (a warning of ``warnings``).
    func attributes(of entry: TreeWalker.Entry) -> ExtendedAttributes? {
        do { return try ExtendedAttributes.read(of: entry.name, in: entry.parent) } catch {
            warnings.record("extended attributes", error)
            return nil
        }
    }

    /// What ``apply(_:attributes:to:)`` gives attributes to, so that no path a race can change
    /// is followed: a link or a node by its name in an open directory, with the calls that
    /// never follow a symbolic link (`fchownat(2)` and `utimensat(2)` with
    /// `AT_SYMLINK_NOFOLLOW`, `fchmodat2(2)`, `l*xattr(2)`); a directory by its own descriptor
    /// (opened `O_DIRECTORY | O_NOFOLLOW` and checked by device and inode).
    enum AttributeTarget {
        case entry(Pathname, in: DirectoryHandle)
        case directory(DirectoryHandle)
    }

    /// Gives `target` the attributes of `status`, in `cp -p`'s order: owner and group (where
    /// permitted: any as root, a warning if root is refused; otherwise the group alone,
    /// silently), the extended attributes (ACLs included, and an ACL the source has not
    /// removed; refusals are warnings), the permission bits (not for a symbolic link;
    /// set-user-ID and set-group-ID only when the owner and group were kept), then the access
    /// and modification times.
    ///
    /// - Throws: ``FileError`` of the bits or the times.
    func apply(_ status: FileStatus, attributes: ExtendedAttributes?, to target: AttributeTarget) throws {
        func setOwner(user: UInt32, group: UInt32) throws(FileError) {
            switch target {
            case .entry(let name, let directory): try directory.setOwner(of: name, user: user, group: group)
            case .directory(let handle): try handle.setOwner(user: user, group: group)
            }
        }
        var ownerKept = true
        do { try setOwner(user: status.userID, group: status.groupID) } catch {
            ownerKept = false
            if geteuid() == 0 {
                warnings.record("ownership", error)
            } else {
                try? setOwner(user: .max, group: status.groupID)
            }
        }
        if let attributes {
            let (calls, path, system): (ExtendedAttributes.Target, Pathname, SystemCalls) = switch target {
            case .entry(let name, let directory):
                (ExtendedAttributes.Target(name, in: directory), directory.path.appending(name), directory.system)
            case .directory(let handle): (.descriptor(handle.descriptor.rawValue), handle.path, handle.system)
            }
            // Exactly the source's ACLs: one the destination directory's default ACL gave the
            // new entry, and the source had not, is removed (a link has none).
            let removed = status.kind == .symbolicLink ? [] : attributes.removeACLsNotHeld(from: calls, path: path, system: system)
            for (attribute, error) in attributes.write(to: calls, path: path, system: system) + removed {
                warnings.record(attribute.kind, error)
            }
        }
        let permissions = ownerKept ? status.permissions : status.permissionsWithoutSetID
        switch target {
        case .entry(let name, let directory):
            if status.kind != .symbolicLink { try directory.setPermissions(of: name, to: permissions) }
            try directory.setTimes(of: name, access: status.accessTime, modification: status.modificationTime)
        case .directory(let handle):
            try handle.setPermissions(to: permissions)
            try handle.setTimes(access: status.accessTime, modification: status.modificationTime)
        }
    }
}
