@testable import Sluice

/// Runs `body` on a thread of its own and returns what it returns: for test work that blocks
/// or computes for seconds without suspending (a loop of spilling yields, a semaphore wait),
/// which on the cooperative pool (2 threads on 2 processors) would stall every other test.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DedicatedThread.start(name: "test-work") { continuation.resume(with: Result { try body() }) }
    }
}
