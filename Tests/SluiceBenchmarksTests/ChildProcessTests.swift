import Foundation
import Sluice
@testable import SluiceBenchmarks
import Testing

/// Peak RSS must belong to the child measured: `wait4` on that child, never
/// `getrusage(RUSAGE_CHILDREN)`, which keeps the largest child ever reaped (case C25). After
/// `posix_spawn`, `ru_maxrss` also counts this (large) test process's own peak, so "a small child
/// after a large one reports small" is tested on the measure `sluice bench` reports, the child's
/// own `VmHWM` (SluiceCLITests, `BenchTests`).
@Suite(.serialized) struct ChildProcessTests {
    static let scratch = Pathname(NSTemporaryDirectory())

    @Test func childAllocatingAKnownAmountReportsAtLeastThatPeak() async throws {
        // dd allocates its 96 MiB block and fills it from /dev/zero: at least 96 MiB resident.
        let result = try await ChildProcess.run(
            "/bin/dd", ["if=/dev/zero", "of=/dev/null", "bs=96M", "count=1"], scratch: Self.scratch)
        #expect(result.status == 0)
        #expect(result.peakResidentBytes >= 96 << 20)
    }

    @Test func statusAndOutputAreTheChilds() async throws {
        let result = try await ChildProcess.run("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"], scratch: Self.scratch)
        #expect(result.status == 3)
        #expect(result.standardOutput == "out\n")
        #expect(result.standardError == "err\n")
    }

    @Test func childKilledByASignalReports128PlusItsNumber() async throws {
        let result = try await ChildProcess.run("/bin/sh", ["-c", "kill -TERM $$"], scratch: Self.scratch)
        #expect(result.status == 128 + 15)
    }

    /// `sluice` blocks SIGINT, SIGTERM, SIGHUP and SIGQUIT in every thread (its commit gate takes
    /// them from a signalfd); the programs it starts must not inherit that mask.
    @Test func childStartsWithAnEmptySignalMaskWhateverItsParentBlocks() async throws {
        // Spawned from a thread of its own that blocks the signals, as every thread of sluice does.
        let result = try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                var set = sigset_t()
                sigemptyset(&set)
                for number in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] { sigaddset(&set, number) }
                pthread_sigmask(SIG_BLOCK, &set, nil)
                continuation.resume(with: Result {
                    try ChildProcess.runBlocking("/bin/grep", ["^SigBlk", "/proc/self/status"], scratch: Self.scratch)
                })
            }
            thread.start()
        }
        #expect(result.standardOutput == "SigBlk:\t0000000000000000\n")
    }

    /// CPU time comes from `wait4` on the child: user and system seconds of that child alone.
    @Test func childThatSpinsReportsItsCPUTimeAndOneThatSleepsNearlyNone() async throws {
        // A shell loop that counts to 200,000 burns tens of milliseconds of CPU; `sleep` none.
        let busy = try await ChildProcess.run(
            "/bin/sh", ["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"], scratch: Self.scratch)
        let idle = try await ChildProcess.run("/bin/sleep", ["0.2"], scratch: Self.scratch)
        #expect(busy.status == 0 && idle.status == 0)
        #expect(busy.cpuSeconds > 0.01, "\(busy.cpuSeconds)")
        #expect(busy.cpuSeconds <= busy.seconds * 2 + 0.01)
        #expect(idle.seconds >= 0.2)
        #expect(idle.cpuSeconds < 0.1, "\(idle.cpuSeconds)")
    }
}
