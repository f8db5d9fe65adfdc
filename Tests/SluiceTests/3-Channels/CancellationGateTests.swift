import Synchronization
import SluiceTestSupport
import Testing
@testable import Sluice

@Suite(.timeLimit(.minutes(3)))
struct CancellationGateTests {
    @Test func freshGateIsNotCancelled() {
        let gate = CancellationGate()
        #expect(!gate.isCancelled)
    }

    @Test func cancelBeforeInstallRunsHandlerDuringInstallExactlyOnce() async {
        let gate = CancellationGate()
        gate.cancel()
        #expect(gate.isCancelled)
        let ran = LockedValue(false)
        await confirmation(expectedCount: 1) { confirm in
            gate.install {
                ran.withLock { $0 = true }
                confirm()
            }
            // Ran synchronously, on this thread, before install returned.
            #expect(ran.withLock { $0 })
            gate.cancel()
            gate.cancel()
        }
    }

    @Test func installThenCancelTwiceRunsHandlerOnce() async {
        let gate = CancellationGate()
        await confirmation(expectedCount: 1) { confirm in
            gate.install { confirm() }
            #expect(!gate.isCancelled)
            gate.cancel()
            gate.cancel()
        }
        #expect(gate.isCancelled)
    }

    @Test func handlerNeverRunsWithoutCancel() async {
        await confirmation(expectedCount: 0) { confirm in
            let gate = CancellationGate()
            gate.install { confirm() }
        }
    }

    @Test(arguments: [2, 16, 64])
    func concurrentCancelsRunHandlerOnce(tasks: Int) async {
        let gate = CancellationGate()
        await confirmation(expectedCount: 1) { confirm in
            gate.install { confirm() }
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<tasks {
                    group.addTask { gate.cancel() }
                }
            }
        }
        #expect(gate.isCancelled)
    }

    @Test(arguments: 0..<20)
    func installRacingCancelsRunsHandlerOnce(round: Int) async {
        let gate = CancellationGate()
        await confirmation(expectedCount: 1) { confirm in
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<8 {
                    if index == round % 8 {
                        group.addTask { gate.install { confirm() } }
                    }
                    group.addTask { gate.cancel() }
                }
            }
        }
    }

    @Test func handlerMayCallBackIntoTheGate() async {
        let gate = CancellationGate()
        await confirmation(expectedCount: 1) { confirm in
            gate.install {
                // The lock is not held here, so re-entry does not deadlock.
                #expect(gate.isCancelled)
                gate.cancel()
                confirm()
            }
            gate.cancel()
        }
    }

    @Test func secondInstallTraps() async {
        await #expect(processExitsWith: .failure) {
            let gate = CancellationGate()
            gate.install {}
            gate.install {}
        }
    }
}
