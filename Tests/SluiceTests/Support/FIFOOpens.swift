#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Sluice

/// The real system calls, watching the opens of one FIFO by its path: when the writer's blocking
/// `open(2)` (write-only, without `O_NONBLOCK`) is called, and which descriptors opened on the
/// FIFO are still open.
final class FIFOOpens: Sendable {
    let system: SystemCalls
    /// Opened when the writer's blocking open is called, just before the call itself.
    let writerOpening = Latch()
    private let descriptors = LockedValue<Set<CInt>>([])

    init(_ fifo: Pathname) {
        var calls = SystemCalls.live
        let (open, close, writerOpening, descriptors) = (calls.open, calls.close, writerOpening, descriptors)
        calls.open = { path, flags, mode in
            let isFIFO = String(cString: path) == fifo.description
            if isFIFO, flags & O_ACCMODE == O_WRONLY, flags & O_NONBLOCK == 0 { writerOpening.open() }
            let result = open(path, flags, mode)
            if isFIFO, case .success(let descriptor) = result { descriptors.withLock { _ = $0.insert(descriptor) } }
            return result
        }
        calls.close = { descriptor in
            descriptors.withLock { _ = $0.remove(descriptor) }
            return close(descriptor)
        }
        system = calls
    }

    /// The descriptors opened on the FIFO and not closed since.
    var openDescriptors: Set<CInt> { descriptors.withLock { $0 } }
}
