import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A sink's temporary file whose data and attributes are complete, before its commit point:
/// what ``FileSink/seal()`` hands over, so that a batch of files is made durable by one
/// `syncfs(2)` and named afterwards (``Copier``), and what the sink's own ``FileSink/commit()``
/// names.
/// It keeps the temporary file's descriptor open (an unnamed `O_TMPFILE` file is named through
/// it, and would be gone once closed): ``makeDurable(fsyncs:)`` first checks that this file's
/// data was written without error (one `syncfs(2)` may have reported the error for another
/// batch, and before Linux 5.8 it reports none), with `sync_file_range(2)`, which after the
/// batch's `syncfs(2)` writes nothing more and, unlike an `fsync(2)` of each file, makes ext4
/// flush no device cache per file; or, where that call cannot see the file's pages or
/// `syncfs(2)` failed, with an `fsync(2)`.
///
/// Its owner must end it with ``makeDurable(fsyncs:)``, ``rename()`` then ``unregister()``, or
/// with ``discard(closed:)``: the sink no longer removes it. Registered with its ``CommitGate`` until then, so a program exiting on a
/// second signal removes it (``CommitGate/removeUncommitted()``).
///
/// Concurrency contract: a value; its methods block on system calls (call them from a thread of
/// a ``BlockingIOExecutor``), and each is called once.
struct SealedFile: Sendable {
    /// The temporary file, open for writing; `nil` once closed (a named temporary file whose
    /// sink closed it before its commit).
    let descriptor: Descriptor?
    /// The temporary file's name; `nil` for an unnamed (`O_TMPFILE`) file, named at the commit
    /// point through ``descriptor``.
    let temporary: FileLocation?
    let location: FileLocation
    let ticket: CommitGate.Ticket
    let gate: CommitGate
    let overwrites: Bool
    /// Whether a file was at the destination when the sink was made: messages say "replace"
    /// for it and "create" for a new name.
    let replacesExisting: Bool
    let system: SystemCalls

    /// The destination's user-visible path.
    var destination: Pathname { location.path }

    /// Names the file at the destination at the commit point, through the gate
    /// (``unregister()`` follows once what comes after it is done), then closes its descriptor
    /// (whatever the outcome). Without `overwrites`, the destination's name is never replaced:
    /// an unnamed file is linked to it (`linkat(2)` refuses an existing name), a named one
    /// renamed with `renameat2(2)`'s `RENAME_NOREPLACE` (falling back to `link(2)` +
    /// `unlink(2)`, which also refuse an existing name, on file systems without it). With
    /// `overwrites`, an unnamed file is linked under a temporary name and renamed over the
    /// destination (linked straight to its name when that is free), a named one renamed.
    ///
    /// - Throws: `CancellationError` if the gate recorded an interruption or closed (nothing
    ///   named); ``FileError``: `alreadyExists` if the destination appeared meanwhile, or the
    ///   errno of the link or rename (`cannot create` for a new name, `cannot replace` for an
    ///   existing one). A named temporary file is then still there for ``discard(closed:)``.
    ///   `close` when the unnamed file, once given a new name, could not be closed (a network
    ///   file system reporting a failed write-back): the name is removed again, as the file may
    ///   not be whole.
    func rename() throws {
        do {
            try gate.commit(ticket) { () throws(FileError) in try moveIntoPlace() }
        } catch {
            if let descriptor { try? descriptor.close(system: system) }
            throw error
        }
        guard let descriptor else { return }
        do throws(ErrorNumber) { try descriptor.close(system: system) } catch {
            // A replaced file cannot be brought back: its new data stands, as a rename of a
            // closed file would have left it.
            guard !replacesExisting else { return }
            _ = location.remove(system: system)
            throw FileError.close(path: destination, errno: error)
        }
    }

    /// Forgets the file at the gate once its rename and what follows it are done.
    func unregister() {
        gate.unregister(ticket)
    }

    /// After the batch's `syncfs(2)`: the check of this file's write-back (`sync_file_range(2)`
    /// over the whole file, waiting before and after a write), or with `fsyncs` an `fsync(2)`.
    /// Its data is durable when this returns; the descriptor stays open for ``rename()``.
    ///
    /// - Throws: ``FileError`` (operation `fsync`); the file is then still there for
    ///   ``discard(closed:)``.
    func makeDurable(fsyncs: Bool) throws(FileError) {
        guard let descriptor else {
            // A named file closed while it waited: reopened by its name for the check (a new
            // descriptor reports the write-back errors no one has seen, Linux 4.16 and later).
            guard let temporary else { return }
            let reopened: Descriptor
            do {
                reopened = try Self.reopen(temporary, system: system)
            } catch where error.isDescriptorExhaustion && !fsyncs {
                // Every descriptor taken: the batch's syncfs(2), which succeeded on this file
                // system, decides for this file.
                return
            }
            defer { try? reopened.close(system: system) }
            return try SealedFile(
                descriptor: reopened, temporary: temporary, location: location, ticket: ticket, gate: gate, overwrites: overwrites,
                replacesExisting: replacesExisting, system: system
            ).makeDurable(fsyncs: fsyncs)
        }
        let flags = CSluiceShims_SYNC_FILE_RANGE_WAIT_BEFORE | CSluiceShims_SYNC_FILE_RANGE_WRITE
            | CSluiceShims_SYNC_FILE_RANGE_WAIT_AFTER
        do throws(ErrorNumber) {
            if fsyncs {
                try descriptor.synchronize(system: system)
            } else {
                try ErrorNumber.retryingInterrupts { system.synchronizeFileRange(descriptor.rawValue, flags) }.get()
            }
        } catch {
            throw FileError.fsync(path: destination, errno: error)
        }
    }

    /// Opens a closed temporary file again: read-only, or write-only for a file whose bits let
    /// its owner only write it.
    private static func reopen(_ temporary: FileLocation, system: SystemCalls) throws(FileError) -> Descriptor {
        do { return try temporary.open(O_RDONLY, system: system) } catch where error.errno == .permissionDenied {
            return try temporary.open(O_WRONLY, system: system)
        }
    }

    /// Closes the descriptor unless `closed` (``rename()`` ran), removes the temporary file
    /// (errors ignored; an unnamed one is gone with its descriptor) and unregisters it.
    func discard(closed: Bool = false) {
        if !closed, let descriptor { try? descriptor.close(system: system) }
        temporary?.removeQuietly(system: system)
        gate.unregister(ticket)
    }

    private func moveIntoPlace() throws(FileError) {
        guard let temporary else { return try linkIntoPlace() }
        let flags = overwrites ? 0 : CSluiceShims_RENAME_NOREPLACE
        let result = temporary.rename(to: location, flags: flags, system: system)
        guard case .failure(var error) = result else { return }
        if !overwrites && (error == .invalidArgument || error == ErrorNumber(rawValue: ENOSYS)) {
            switch temporary.link(to: location, system: system) {
            case .success:
                temporary.removeQuietly(system: system)
                return
            case .failure(let linkError):
                error = linkError
            }
        }
        throw failure(error)
    }

    /// Names the unnamed file: a link to the destination's name when it is free (or must not be
    /// replaced), else a link under a temporary name renamed over it (the temporary name removed
    /// if the rename fails; named in the message if even that is refused).
    private func linkIntoPlace() throws(FileError) {
        guard let descriptor else { preconditionFailure("an unnamed temporary file without its descriptor") }
        // A name that appeared while the data was written, replaced with --force: "replace".
        var replaces = replacesExisting
        if !overwrites || !replacesExisting {
            switch location.link(descriptor: descriptor, system: system) {
            case .success: return
            case .failure(let error) where error == .fileExists && overwrites: replaces = true  // appeared meanwhile: replaced
            case .failure(let error): throw failure(error)
            }
        }
        var temporary: FileLocation
        while true {
            temporary = location.sibling(Descriptor.uniqueName(prefix: ".sluice-"))
            switch temporary.link(descriptor: descriptor, system: system) {
            case .success: break
            case .failure(.fileExists): continue
            case .failure(let error): throw failure(error, replacing: replaces)
            }
            break
        }
        guard case .failure(let error) = temporary.rename(to: location, flags: 0, system: system) else { return }
        var failed = failure(error, replacing: replaces)
        if case .failure(let removal) = temporary.remove(system: system) {
            failed.reason = "\(error); its temporary file '\(temporary.path)' could not be removed: \(removal)"
        }
        throw failed
    }

    /// The error of a link or rename that failed with `error`.
    private func failure(_ error: ErrorNumber, replacing: Bool? = nil) -> FileError {
        if error == .fileExists { return FileError.destinationExists(destination) }
        return replacing ?? replacesExisting
            ? FileError.rename(path: destination, errno: error) : FileError.create(path: destination, errno: error)
    }
}

extension FileSink {
    func sealedFile(_ temporary: FileLocation?, _ ticket: CommitGate.Ticket, descriptor: Descriptor?) -> SealedFile {
        SealedFile(
            descriptor: descriptor, temporary: temporary, location: location, ticket: ticket, gate: gate, overwrites: options.replacesExisting,
            replacesExisting: replacesExisting, system: system)
    }

    /// Seals the file for a caller that makes many files durable at once and names them
    /// afterwards (``Copier``'s sync batch, with ``Options/synchronizes`` off): the first step of
    /// ``commit()`` (the size after a final hole, the attributes, `fsync(2)` as the options
    /// say) without the rename. With ``Options/closesSealedFile`` a named temporary file is
    /// closed (its owner reopens it by its name for its check); an unnamed one keeps its
    /// descriptor, through which it is named.
    ///
    /// - Returns: the sealed file, its owner's from then on (who ends it as ``SealedFile`` says;
    ///   the sink no longer removes it); `nil` for a destination written in place, which has
    ///   nothing to name: it is committed (closed) as ``commit()`` commits it.
    /// - Throws: ``FileError`` of the step that failed (`ftruncate`, `fchmod`, `futimens`,
    ///   `fsync`, `close`); the temporary file is then still the sink's, for ``abort()``.
    func seal() throws -> SealedFile? {
        guard case .open(let descriptor, let mode) = state, case .replacing(let temporary, let ticket) = mode else {
            try commit()
            return nil
        }
        let closes = options.closesSealedFile && temporary != nil
        try makeDataDurable(descriptor, mode, keepsOpen: !closes)
        state = .sealed
        return sealedFile(temporary, ticket, descriptor: closes ? nil : descriptor)
    }
}

/// Where a copy that ends by sealing its file instead of committing it leaves the sealed file:
/// a ``Copier``'s file that joins a sync batch. The copy calls ``seal()`` where it would call
/// the sink's ``FileSink/commit()`` (`Pipeline.sealing(into:)`); its caller then takes the file
/// (``take()``). A file sealed and never taken is removed when the slot goes.
///
/// Concurrency contract: thread-safe (a lock); ``seal()`` is called once, by the copy's writer.
final class SealedFileSlot: Sendable {
    private let sink: FileSink
    private let file = LockedValue<SealedFile?>(nil)

    /// A slot for what `sink` seals.
    init(_ sink: FileSink) { self.sink = sink }

    /// Seals the sink (``FileSink/seal()``) and keeps its file: none for a destination written
    /// in place, which is committed.
    ///
    /// - Throws: as ``FileSink/seal()``; the sink still holds its file, for its abort.
    func seal() async throws {
        let sealed = try await sink.seal()
        file.withLock { $0 = sealed }
    }

    /// The sealed file, the caller's from then on; `nil` when there is none (not sealed, in
    /// place, or taken already).
    func take() -> SealedFile? { file.withLock { $0.take() } }

    deinit { take()?.discard() }
}
