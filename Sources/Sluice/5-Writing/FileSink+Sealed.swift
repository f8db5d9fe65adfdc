import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A sink's temporary file whose data and attributes are complete, before its `fsync(2)` and its
/// rename: what ``FileSink/takeSealed()`` hands over when the rename was deferred
/// (``FileSink/deferRename()``), so that a batch of files is made durable by one `syncfs(2)`
/// and renamed afterwards (``ManyFileCopy``). It keeps the temporary file's descriptor open:
/// ``close(fsyncs:)`` first checks that this file's data was written without error (one
/// `syncfs(2)` may have reported the error for another batch, and before Linux 5.8 it reports
/// none), with `sync_file_range(2)`, which after the batch's `syncfs(2)` writes nothing more
/// and, unlike an `fsync(2)` of each file, makes ext4 flush no device cache per file; or, where
/// that call cannot see the file's pages or `syncfs(2)` failed, with an `fsync(2)`.
///
/// Its owner must end it with ``close(fsyncs:)``, ``rename()`` then ``unregister()``, or
/// with ``discard(closed:)``: the sink no longer removes it. Registered with its ``CommitGate`` until then, so a program exiting on a
/// second signal removes it (``CommitGate/removeUncommitted()``).
///
/// Concurrency contract: a value; its methods block on system calls (call them from a thread of
/// a ``BlockingIOExecutor``), and each is called once.
struct SealedFile: Sendable {
    /// The temporary file, open for writing; `nil` once closed (or for a rename of the sink's own).
    let descriptor: FileDescriptor?
    let temporary: FileLocation
    let location: FileLocation
    let ticket: CommitGate.Ticket
    let gate: CommitGate
    let overwrites: Bool
    let system: SystemCalls

    /// The destination's user-visible path.
    var destination: FilePath { location.path }

    /// Renames the temporary file over the destination at the commit point, through the
    /// gate (``unregister()`` follows once what comes after the rename is done). Without `overwrites`, with
    /// `renameat2(2)`'s `RENAME_NOREPLACE`, so a file that appeared at the destination while the
    /// data was written is never replaced (falling back to `link(2)` + `unlink(2)`, which also
    /// refuse an existing name, on file systems without it).
    ///
    /// - Throws: `CancellationError` if the gate recorded an interruption or closed (nothing
    ///   renamed); ``FileError``: `alreadyExists` if the destination appeared meanwhile, or the
    ///   errno of the rename. The temporary file is then still there for ``discard()``.
    func rename() throws {
        try gate.commit(ticket) { () throws(FileError) in try moveIntoPlace() }
    }

    /// Forgets the file at the gate once its rename and what follows it are done.
    func unregister() {
        gate.unregister(ticket)
    }

    /// After the batch's `syncfs(2)`: the check of this file's write-back (`sync_file_range(2)`
    /// over the whole file, waiting before and after a write), or with `fsyncs` an `fsync(2)`;
    /// then `close(2)`. Its data is durable when this returns.
    ///
    /// - Throws: ``FileError`` of either; the file is then still there for ``discard()``.
    func close(fsyncs: Bool) throws(FileError) {
        guard let descriptor else { return }
        let flags = CSluiceShims_SYNC_FILE_RANGE_WAIT_BEFORE | CSluiceShims_SYNC_FILE_RANGE_WRITE
            | CSluiceShims_SYNC_FILE_RANGE_WAIT_AFTER
        do throws(Errno) {
            if fsyncs {
                try descriptor.synchronize(system: system)
            } else {
                try Errno.retryingInterrupts { sync_file_range(descriptor.rawValue, 0, 0, flags) == 0 ? .success(()) : .failure(.current) }.get()
            }
        } catch {
            try? descriptor.close(system: system)
            throw FileError.fsync(path: destination, errno: error)
        }
        do throws(Errno) { try descriptor.close(system: system) } catch {
            throw FileError.close(path: destination, errno: error)
        }
    }

    /// Closes the descriptor unless `closed` (``close(fsyncs:)`` ran), removes the temporary file (errors
    /// ignored) and unregisters it.
    func discard(closed: Bool = false) {
        if !closed, let descriptor { try? descriptor.close(system: system) }
        temporary.removeQuietly()
        gate.unregister(ticket)
    }

    private func moveIntoPlace() throws(FileError) {
        let flags = overwrites ? 0 : CSluiceShims_RENAME_NOREPLACE
        let result = temporary.rename(to: location, flags: flags, system: system)
        guard case .failure(var error) = result else { return }
        if !overwrites && (error == .invalidArgument || error == Errno(rawValue: ENOSYS)) {
            switch temporary.link(to: location) {
            case .success:
                temporary.removeQuietly()
                return
            case .failure(let linkError):
                error = linkError
            }
        }
        if error == .fileExists { throw FileError.destinationExists(destination) }
        throw FileError.rename(path: destination, errno: error)
    }
}

extension FileSink {
    func sealedFile(_ temporary: FileLocation, _ ticket: CommitGate.Ticket, descriptor: FileDescriptor?) -> SealedFile {
        SealedFile(
            descriptor: descriptor, temporary: temporary, location: location, ticket: ticket, gate: gate, overwrites: options.overwrite,
            system: system)
    }

    /// Makes ``commit()`` stop once the data and attributes are complete, with the temporary
    /// file still open (no `fsync(2)`, no rename). The caller then
    /// takes the file with ``takeSealed()``. Call it before the copy; a destination written in
    /// place (a device) is committed as before.
    func deferRename() {
        defersRename = true
    }

    /// The sealed temporary file after a ``commit()`` whose rename was deferred; `nil` when
    /// there is none (a destination written in place, or the rename was not deferred). The
    /// caller owns it from then on.
    func takeSealed() -> SealedFile? {
        guard case .sealed(let file) = state else { return nil }
        state = .committed
        return file
    }
}
