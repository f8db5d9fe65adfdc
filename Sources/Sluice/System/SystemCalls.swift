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
public struct SystemCalls: Sendable {
    /// `read(2)`: reads up to `count` bytes into the buffer; 0 at end of file.
    public var read: @Sendable (_ descriptor: CInt, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Result<Int, Errno>
    /// `write(2)`: writes up to `count` bytes from the buffer; may write fewer.
    public var write: @Sendable (_ descriptor: CInt, _ buffer: UnsafeRawPointer, _ count: Int) -> Result<Int, Errno>
    /// `fsync(2)`.
    public var fsync: @Sendable (_ descriptor: CInt) -> Result<Void, Errno>

    /// Creates a set of system calls from the given functions.
    public init(
        read: @escaping @Sendable (CInt, UnsafeMutableRawPointer, Int) -> Result<Int, Errno>,
        write: @escaping @Sendable (CInt, UnsafeRawPointer, Int) -> Result<Int, Errno>,
        fsync: @escaping @Sendable (CInt) -> Result<Void, Errno>
    ) {
        self.read = read
        self.write = write
        self.fsync = fsync
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
        }
    )
}
