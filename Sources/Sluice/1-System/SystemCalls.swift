import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The system calls on Sluice's data path, as replaceable functions: the seam through which
/// tests inject `EINTR`, short counts and failures such as `EFBIG` without touching the kernel.
///
/// Each function performs one raw call and reports its result or its `errno`; retrying
/// `EINTR` and short counts is the job of ``FileDescriptor``, so an injected `EINTR` exercises
/// exactly the code that a real signal would.
///
/// The data path of a copy, a compress or a decompress goes through it call by call: the `open`
/// of the source, of the temporary file and of the directory to sync, every `read` and `write`,
/// both `fsync`s, every `close`, and the `rename` at the commit point. Metadata calls (`stat`,
/// `fstat`, `fcntl`, `poll`, attribute setters) and the `unlink` of a discarded temporary file
/// are not part of it.
public struct SystemCalls: Sendable {
    /// `read(2)`: reads up to `count` bytes into the buffer; 0 at end of file.
    public var read: @Sendable (_ descriptor: CInt, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Result<Int, Errno>
    /// `write(2)`: writes up to `count` bytes from the buffer; may write fewer.
    public var write: @Sendable (_ descriptor: CInt, _ buffer: UnsafeRawPointer, _ count: Int) -> Result<Int, Errno>
    /// `writev(2)`: writes up to the total length of `count` buffers, in order, with one call;
    /// may write fewer bytes.
    public var writev: @Sendable (_ descriptor: CInt, _ vectors: UnsafePointer<iovec>, _ count: CInt) -> Result<Int, Errno>
    /// `fsync(2)`.
    public var fsync: @Sendable (_ descriptor: CInt) -> Result<Void, Errno>
    /// `open(2)`: opens `path` with `flags` (the caller adds `O_CLOEXEC`) and, for a created
    /// file, `mode`; returns the new descriptor.
    public var open: @Sendable (_ path: UnsafePointer<CChar>, _ flags: CInt, _ mode: mode_t) -> Result<CInt, Errno>
    /// `close(2)`: on Linux the descriptor is released even when an error (`EINTR`, `EIO`) is
    /// reported, so a replacement must release it too.
    public var close: @Sendable (_ descriptor: CInt) -> Result<Void, Errno>
    /// `renameat2(2)` with both paths relative to the current directory (`AT_FDCWD`): `flags`
    /// 0 is `rename(2)`; `RENAME_NOREPLACE` refuses to replace an existing `to` (`EEXIST`).
    public var rename: @Sendable (_ from: UnsafePointer<CChar>, _ to: UnsafePointer<CChar>, _ flags: CUnsignedInt) -> Result<Void, Errno>

    /// Creates a set of system calls from the given functions; those not given are the real ones.
    public init(
        read: @escaping @Sendable (CInt, UnsafeMutableRawPointer, Int) -> Result<Int, Errno>,
        write: @escaping @Sendable (CInt, UnsafeRawPointer, Int) -> Result<Int, Errno>,
        fsync: @escaping @Sendable (CInt) -> Result<Void, Errno>,
        writev: (@Sendable (CInt, UnsafePointer<iovec>, CInt) -> Result<Int, Errno>)? = nil,
        open: @escaping @Sendable (UnsafePointer<CChar>, CInt, mode_t) -> Result<CInt, Errno> = SystemCalls.liveOpen,
        close: @escaping @Sendable (CInt) -> Result<Void, Errno> = SystemCalls.liveClose,
        rename: @escaping @Sendable (UnsafePointer<CChar>, UnsafePointer<CChar>, CUnsignedInt) -> Result<Void, Errno> =
            SystemCalls.liveRename
    ) {
        self.read = read
        self.write = write
        // Without a `writev` of its own, a gathered write goes through `write`, one buffer per
        // call (a short `writev` is allowed to stop after the first buffer), so an injected
        // `write` sees every byte.
        self.writev = writev ?? { descriptor, vectors, count in
            guard let first = UnsafeBufferPointer(start: vectors, count: Int(count)).first(where: { $0.iov_len > 0 }) else {
                return .success(0)
            }
            return write(descriptor, UnsafeRawPointer(first.iov_base!), first.iov_len)
        }
        self.fsync = fsync
        self.open = open
        self.close = close
        self.rename = rename
    }

    /// The real system calls.
    public static let live = SystemCalls(
        read: { descriptor, buffer, count in
            let result = Glibc.read(descriptor, buffer, count)
            return result < 0 ? .failure(.current) : .success(result)
        },
        write: { descriptor, buffer, count in
            let result = Glibc.write(descriptor, buffer, count)
            return result < 0 ? .failure(.current) : .success(result)
        },
        fsync: { descriptor in
            Glibc.fsync(descriptor) < 0 ? .failure(.current) : .success(())
        },
        writev: { descriptor, vectors, count in
            let result = Glibc.writev(descriptor, vectors, count)
            return result < 0 ? .failure(.current) : .success(result)
        }
    )

    /// The real `open(2)`.
    public static let liveOpen: @Sendable (UnsafePointer<CChar>, CInt, mode_t) -> Result<CInt, Errno> = { path, flags, mode in
        let descriptor = Glibc.open(path, flags, mode)
        return descriptor < 0 ? .failure(.current) : .success(descriptor)
    }

    /// The real `close(2)`.
    public static let liveClose: @Sendable (CInt) -> Result<Void, Errno> = { descriptor in
        Glibc.close(descriptor) < 0 ? .failure(.current) : .success(())
    }

    /// The real `rename(2)` (`flags` 0) or `renameat2(2)`.
    public static let liveRename: @Sendable (UnsafePointer<CChar>, UnsafePointer<CChar>, CUnsignedInt) -> Result<Void, Errno> = {
        from, to, flags in
        let result = flags == 0
            ? Glibc.rename(from, to)
            : renameat2(CSluiceShims_AT_FDCWD, from, CSluiceShims_AT_FDCWD, to, flags)
        return result < 0 ? .failure(.current) : .success(())
    }
}
