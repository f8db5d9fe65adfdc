import Foundation
import Sluice
import SluiceBenchmarks
import Testing

/// Peak RSS must belong to the child measured: `wait4` on that child, never
/// `getrusage(RUSAGE_CHILDREN)`, which keeps the largest child ever reaped (case C25).
@Suite(.serialized) struct ChildProcessTests {
    static let scratch = FilePath(NSTemporaryDirectory())

    @Test func childAllocatingAKnownAmountReportsAtLeastThatPeak() async throws {
        // dd allocates its 96 MiB block and fills it from /dev/zero: at least 96 MiB resident.
        let result = try await ChildProcess.run(
            "/bin/dd", ["if=/dev/zero", "of=/dev/null", "bs=96M", "count=1"], scratch: Self.scratch)
        #expect(result.status == 0)
        #expect(result.peakResidentBytes >= 96 << 20)
    }

    @Test func smallChildMeasuredAfterALargeOneReportsSmall() async throws {
        let large = try await ChildProcess.run(
            "/bin/dd", ["if=/dev/zero", "of=/dev/null", "bs=128M", "count=1"], scratch: Self.scratch)
        #expect(large.peakResidentBytes >= 128 << 20)
        let small = try await ChildProcess.run("/bin/true", [], scratch: Self.scratch)
        #expect(small.status == 0)
        #expect(small.peakResidentBytes > 0)
        // ru_maxrss of a posix_spawned child includes this test process's own peak (exec records
        // the shared memory's high-water mark), so "small" is relative to the large child.
        #expect(small.peakResidentBytes < large.peakResidentBytes / 2, "the small child reported \(small.peakResidentBytes) bytes")
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

    @Test func processMemoryReadsThisProcess() {
        #expect(ProcessMemory.residentBytes() > 0)
        #expect(ProcessMemory.peakResidentBytes() >= ProcessMemory.residentBytes())
    }
}
