import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The commit of a ``FileSink`` and its abort: attributes, `fsync(2)`, the rename at the commit
/// point, the directory's `fsync(2)`.
extension FileSink {
    /// Sets the attributes (see ``FileSink``), `fsync(2)`s, closes, renames over the destination
    /// at the commit point and `fsync(2)`s the directory: three steps (data, rename,
    /// directory), of which the last is left to the caller when
    /// ``Options/synchronizesDirectory`` is off.
    ///
    /// A directory that cannot be synced after the rename is a warning (``warnings``), not a
    /// failure: the data is in place.
    ///
    /// - Throws: ``FileError`` of the step that failed; `CancellationError` if the task was
    ///   cancelled, or the gate recorded an interruption, before the commit point (nothing
    ///   renamed). The temporary file is then still there for ``abort()`` to remove.
    public func commit() throws {
        guard case .open(let descriptor, let mode) = state else {
            preconditionFailure("FileSink.commit after commit or abort")
        }
        switch mode {
        case .inPlace:
            state = .committed
            do { try descriptor.close(system: system) } catch {
                throw FileError.close(path: destination, errno: error)
            }
        case .replacing(let temporary, let ticket):
            try makeDataDurable(descriptor, mode, keepsOpen: temporary == nil)
            // An unnamed file is named through its descriptor, which the rename then closes.
            try renameAtCommitPoint(temporary, ticket, descriptor: temporary == nil ? descriptor : nil)
            defer { gate.unregister(ticket) }
            if options.synchronizes && options.synchronizesDirectory { synchronizeParent() }
        }
    }

    /// The first step of a commit: the size after a final hole, the attributes, `fsync(2)` of
    /// the data (unless `synchronize` is off), `close(2)` (unless `keepsOpen`: an unnamed file
    /// is closed once named). Nothing is renamed yet.
    func makeDataDurable(_ descriptor: Descriptor, _ mode: Mode, keepsOpen: Bool) throws {
        try finishData(descriptor)
        if options.synchronizes {
            do { try descriptor.synchronize(system: system) } catch {
                throw FileError.fsync(path: destination, errno: error)
            }
        }
        guard !keepsOpen else { return }
        do { try descriptor.close(system: system) } catch {
            state = .open(Descriptor(rawValue: -1), mode)
            throw FileError.close(path: destination, errno: error)
        }
        state = .open(Descriptor(rawValue: -1), mode)
    }

    /// The size after a final hole, then the attributes.
    func finishData(_ descriptor: Descriptor) throws {
        try setSizeAfterHole(descriptor)
        try applyAttributes(to: descriptor)
    }

    /// When the data ends in a hole, the size from `ftruncate(2)`: before the commit, and
    /// before a read-back (which would otherwise stop where the last data did).
    func setSizeAfterHole(_ descriptor: Descriptor) throws(FileError) {
        guard let size = sizeAfterHole else { return }
        do throws(ErrorNumber) { try descriptor.setSize(size, system: system) } catch {
            throw FileError.ftruncate(path: destination, errno: error)
        }
        sizeAfterHole = nil
    }

    /// The second step: the rename at the commit point, through the `CommitGate`.
    func renameAtCommitPoint(_ temporary: FileLocation?, _ ticket: CommitGate.Ticket, descriptor: Descriptor?) throws {
        // A cancellation that came while the data was synced is still before the commit
        // point: nothing is renamed, and abort() removes the temporary file.
        try Task.checkCancellation()
        if descriptor != nil, case .open(_, let mode) = state {
            // The rename closes it, whatever the outcome.
            state = .open(Descriptor(rawValue: -1), mode)
        }
        try sealedFile(temporary, ticket, descriptor: descriptor).rename()
        state = .committed
        replacedDestination = true
    }

    /// The last step: `fsync(2)` of the directory, so the rename itself is durable.
    func synchronizeParent() {
        do {
            try synchronizeDirectory()
        } catch {
            // The data is in place; only its durability is in doubt. Not "nothing
            // committed": a warning, and --rm keeps the source.
            directorySynchronized = false
            warnings.append(StageWarning("'\(destination)' is in place, but \(error)"))
        }
    }

    /// Whether ``commit()`` made the data durable at ``destination``: a regular file renamed
    /// into place with both fsyncs. `false` before the commit, for a destination written in
    /// place (a device, a FIFO), or with `synchronizes: false`. `--rm` removes a source only then.
    package var isDurablyCommitted: Bool {
        guard case .committed = state else { return false }
        return replacedDestination && options.synchronizes && options.synchronizesDirectory && directorySynchronized
    }

    /// Closes and removes the temporary file, if any (a sealed one is its owner's). Idempotent.
    public func abort() {
        switch state {
        case .open(let descriptor, let mode):
            state = .aborted
            Self.discard(descriptor, mode, gate: gate, system: system)
        case .sealed, .committed, .aborted:
            return
        }
    }

    /// Closes `descriptor` and removes the temporary file of `mode`, if any.
    static func discard(_ descriptor: Descriptor, _ mode: Mode, gate: CommitGate, system: SystemCalls) {
        if descriptor.rawValue >= 0 { try? descriptor.close(system: system) }
        if case .replacing(let temporary, let ticket) = mode {
            temporary?.removeQuietly(system: system)
            gate.unregister(ticket)
        }
    }

    /// The file whose attributes the new one takes at the commit: the source with
    /// `preservesAttributes` (a regular source only), else the replaced regular file; `nil` for
    /// a new file, which is created with its final bits.
    var attributeModel: FileStatus? {
        if options.preservesAttributes, let source, source.kind == .regular { return source }
        return replaced?.status
    }

    /// The attributes the rules in ``FileSink`` give the file, set before the `fsync(2)`:
    /// owner first (`fchown(2)` may clear set-user-ID and set-group-ID, and clears
    /// `security.capability`), then the source's extended attributes (`fsetxattr(2)`, with
    /// `preservesExtendedAttributes`; refusals go to ``attributeRefusals``), then the access ACL (a
    /// replaced file's; with `preservesAttributes` exactly the source's, given by
    /// ``preserveAccessACL(of:)``, none where it had none, whatever the directory's default ACL
    /// gave the new file), then the bits, then the times (``timesToKeep(of:options:)``).
    func applyAttributes(to descriptor: Descriptor) throws {
        if let model = attributeModel {
            let ownerKept = Self.keepOwner(model, on: descriptor, system: system)
            let target = ExtendedAttributes.Target.descriptor(descriptor.rawValue)
            for (attribute, error) in sourceExtendedAttributes.write(to: target, path: destination, system: system) {
                attributeRefusals.append((attribute.kind, error))
            }
            if let replaced, model == replaced.status {
                try Self.setAccessACL(replaced.accessACL, on: descriptor, path: destination, system: system)
            } else {
                do { try Self.setAccessACL(sourceAccessACL, on: descriptor, path: destination, system: system) } catch {
                    // As `cp -p` on a file system without ACLs: the rest is kept, and said.
                    warnings.append(StageWarning("'\(destination)': its ACL is not the source's: \(error)"))
                }
            }
            let permissions = ownerKept ? model.permissions : model.permissionsWithoutSetID
            if case .failure(let error) = ErrorNumber.retryingInterrupts({ system.setPermissions(descriptor.rawValue, mode_t(permissions)) }) {
                throw FileError.fchmod(path: destination, errno: error)
            }
        }
        if let times = Self.timesToKeep(of: source, options: options),
            case .failure(let error) = ErrorNumber.retryingInterrupts({ system.setTimes(descriptor.rawValue, times) }) {
            throw FileError.futimens(path: destination, errno: error)
        }
    }

    /// `fsync(2)` of the directory, through the system-call seam.
    func synchronizeDirectory() throws(FileError) {
        if let handle = location.directory {
            do throws(ErrorNumber) { try handle.descriptor.synchronize(system: system) } catch {
                throw FileError.fsync(path: handle.path, errno: error)
            }
            return
        }
        try Descriptor.synchronizeDirectory(destination.directory, system: system)
    }
}
