#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension ErrorNumber {
    /// Runs a raw system call until it does not fail with `EINTR`.
    ///
    /// The one retry loop of Sluice's system layer: every wrapper of a call that may be
    /// interrupted by a signal goes through it (swift-system's `valueOrErrno(retryOnInterrupt:)`
    /// has the same role). `body` reports the call's result or its `errno`, as
    /// ``SystemCalls`` does.
    ///
    /// - Parameter body: one attempt of the call; run again while it fails with
    ///   ``interrupted``.
    /// - Returns: the first result that is not `EINTR`.
    @inlinable
    static func retryingInterrupts<Value>(_ body: () -> Result<Value, ErrorNumber>) -> Result<Value, ErrorNumber> {
        while true {
            let result = body()
            if case .failure(.interrupted) = result { continue }
            return result
        }
    }

    /// Runs a C call that returns -1 and sets `errno` on failure, until it does not fail with
    /// `EINTR`; see ``retryingInterrupts(_:)-(()->Result<Value,ErrorNumber>)``.
    ///
    /// - Parameter body: one attempt of the call, returning its C result.
    /// - Returns: the call's non-negative result.
    /// - Throws: the call's ``ErrorNumber`` when it failed with anything but `EINTR`.
    @inlinable
    static func retryingInterrupts<Value: BinaryInteger>(_ body: () -> Value) throws(ErrorNumber) -> Value {
        try retryingInterrupts { () -> Result<Value, ErrorNumber> in
            let value = body()
            return value < 0 ? .failure(.current) : .success(value)
        }.get()
    }
}
