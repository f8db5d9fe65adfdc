@testable import Sluice

/// A counter that several threads may bump (for fake system calls and sources).
final class Counter: Sendable {
    private let value = LockedValue(0)

    /// Adds one and returns the new value.
    @discardableResult
    func increment() -> Int {
        value.withLock { value in
            value += 1
            return value
        }
    }

    var current: Int { value.withLock { $0 } }
}
