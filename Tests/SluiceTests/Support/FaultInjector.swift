#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Sluice

/// A kind of call on the system-call seam (``SystemCalls``).
enum SystemCallKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case open, read, write, fsync, close, rename
    /// `linkat(2)`: the naming of an unnamed (`O_TMPFILE`) file at the commit point.
    case link

    var description: String { rawValue }
}

/// What an injected fault does to one call.
enum InjectedFault: Sendable, Hashable, CustomStringConvertible {
    /// The call fails with this errno and does nothing (a `close` releases the descriptor
    /// first, as Linux does whatever `close(2)` reports).
    case failure(ErrorNumber)
    /// `EINTR` before anything happened (a `close`: after releasing the descriptor).
    case interrupted
    /// A `read` or `write` of more than one byte transfers half of them.
    case shortTransfer
    /// `EAGAIN`, as a descriptor in non-blocking mode answers when it is not ready.
    case wouldBlock

    var description: String {
        switch self {
        case .failure(let errno): "\(Self.name(errno))"
        case .interrupted: "EINTR"
        case .shortTransfer: "short"
        case .wouldBlock: "EAGAIN"
        }
    }

    /// What the call reports instead of its result; `nil` for a short transfer, which happens.
    var errno: ErrorNumber? {
        switch self {
        case .failure(let errno): errno
        case .interrupted: .interrupted
        case .shortTransfer: nil
        case .wouldBlock: .resourceTemporarilyUnavailable
        }
    }

    /// Whether the operation must still end complete and identical.
    var isTransient: Bool {
        if case .failure = self { false } else { true }
    }

    private static func name(_ errno: ErrorNumber) -> String {
        switch errno {
        case .ioError: "EIO"
        case .noSpace: "ENOSPC"
        default: "errno \(errno.rawValue)"
        }
    }
}

/// One point of a fault sweep: the `index`th call (from 1) of `kind` gets `fault`.
struct FaultPoint: Sendable, Hashable, CustomStringConvertible {
    var kind: SystemCallKind
    var index: Int
    var fault: InjectedFault

    var description: String { "\(fault) at \(kind) #\(index)" }
}

/// ``SystemCalls`` over the real ones that counts the calls of each kind, remembers which path
/// each descriptor was opened with, and injects at most one fault (``point``).
///
/// Calls are counted per kind, not in one sequence: a pipeline's reader and writer run on
/// threads of their own, so whether the 7th call is a read or a write depends on scheduling,
/// while the 3rd write is always the same write.
final class FaultInjector: Sendable {
    private struct State {
        var counts: [SystemCallKind: Int] = [:]
        var opened: [CInt: String] = [:]
        var target: String?
    }

    /// The fault to inject, if any.
    let point: FaultPoint?
    private let state = LockedValue(State())

    init(injecting point: FaultPoint? = nil) {
        self.point = point
    }

    /// The count of calls made, by kind.
    var counts: [SystemCallKind: Int] { state.withLock { $0.counts } }

    /// What the faulted call was about: the path it opened or renamed, or the path its
    /// descriptor was opened with through the seam (`pipe` for one opened elsewhere); `nil`
    /// while the point has not been reached.
    var target: String? { state.withLock { $0.target } }

    /// Counts a call and answers the fault it gets, if it is the point's.
    private func fault(for kind: SystemCallKind, descriptor: CInt? = nil, path: UnsafePointer<CChar>? = nil) -> InjectedFault? {
        state.withLock { state -> InjectedFault? in
            let index = (state.counts[kind] ?? 0) + 1
            state.counts[kind] = index
            guard let point, point.kind == kind, point.index == index else { return nil }
            state.target = path.map { String(cString: $0) } ?? descriptor.flatMap { state.opened[$0] } ?? "pipe"
            return point.fault
        }
    }

    private func record(_ descriptor: CInt, openedAt path: UnsafePointer<CChar>?) {
        let name = path.map { String(cString: $0) }
        state.withLock { $0.opened[descriptor] = name }
    }

    /// The seam: the real calls, with the fault at ``point``.
    var system: SystemCalls {
        let live = SystemCalls.live
        var calls = SystemCalls(
            read: { descriptor, buffer, count in
                self.transfer(.read, descriptor, count) { live.read(descriptor, buffer, $0) }
            },
            write: { descriptor, buffer, count in
                self.transfer(.write, descriptor, count) { live.write(descriptor, buffer, $0) }
            },
            fsync: { descriptor in
                if let errno = self.fault(for: .fsync, descriptor: descriptor)?.errno { return .failure(errno) }
                return live.fsync(descriptor)
            },
            open: { path, flags, mode in
                if let errno = self.fault(for: .open, path: path)?.errno { return .failure(errno) }
                let result = live.open(path, flags, mode)
                if case .success(let descriptor) = result { self.record(descriptor, openedAt: path) }
                return result
            },
            close: { descriptor in
                let errno = self.fault(for: .close, descriptor: descriptor)?.errno
                self.record(descriptor, openedAt: nil)
                let result = live.close(descriptor)  // released whatever close(2) reports
                return errno.map { .failure($0) } ?? result
            },
            rename: { from, to, flags in
                if let errno = self.fault(for: .rename, path: from)?.errno { return .failure(errno) }
                return live.rename(from, to, flags)
            })
        calls.linkAt = { fromDirectory, from, toDirectory, to, flags in
            if let errno = self.fault(for: .link, path: to)?.errno { return .failure(errno) }
            return live.linkAt(fromDirectory, from, toDirectory, to, flags)
        }
        return calls
    }

    /// A `read` or `write` of `count` bytes, made by `call` with the count to transfer, with the
    /// fault of this call if any.
    private func transfer(
        _ kind: SystemCallKind, _ descriptor: CInt, _ count: Int, _ call: (Int) -> Result<Int, ErrorNumber>
    ) -> Result<Int, ErrorNumber> {
        let fault = self.fault(for: kind, descriptor: descriptor)
        if let errno = fault?.errno { return .failure(errno) }
        return call(fault == .shortTransfer ? max(1, count / 2) : count)
    }
}
