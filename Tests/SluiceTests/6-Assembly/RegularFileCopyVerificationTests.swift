import Testing
@testable import Sluice
import SluiceTestSupport

/// `--verify` and `--limit-rate` on ``RegularFileCopy``'s paths, through the scripted kernel
/// calls of ``KernelCalls`` (the file system reported as XFS): a kernel copy is verified by a
/// second read of the source, a clone is not read back, a rate limit takes the pipeline.
@Suite(.timeLimit(.minutes(3)))
struct RegularFileCopyVerificationTests {
    static let corrupted: Int64 = 2_345_678

    static func options(rateLimit: Int64? = nil) -> RegularFileCopy.Options {
        .init(pipeline: .init(capacity: 4, rateLimit: rateLimit.map { RateLimiter(bytesPerSecond: $0) }, verifiesOutput: true), sliceSize: 1 << 20)
    }

    @Test func kernelCopyIsVerifiedByReadingTheSourceAgain() async throws {
        try await withScratchDirectory { directory in
            let data = randomBytes(count: RegularFileCopyTests.size, seed: 17)
            let calls = KernelCalls(fileSystem: .xfs, clone: .notSupported)
            let (report, _) = try await RegularFileCopyTests.copy(data, in: directory, calls: calls, options: Self.options())
            #expect(report.method == .kernelCopy)
            #expect(report.verification == .verified)
            #expect(report.crc32 == CRC32(data).value)
            #expect(try readFile(directory.appending("copy")) == data)
        }
    }

    /// A byte stored wrongly by `copy_file_range`: the read back finds it, nothing is committed.
    @Test func corruptedKernelCopyIsAbortedAtTheFirstDifference() async throws {
        try await withScratchDirectory { directory in
            let data = randomBytes(count: RegularFileCopyTests.size, seed: 17)
            let calls = KernelCalls(fileSystem: .xfs, clone: .notSupported, copy: { _ in .corrupting(at: Self.corrupted) })
            let error = try await #require(throws: VerificationError.self) {
                try await RegularFileCopyTests.copy(data, in: directory, calls: calls, options: Self.options())
            }
            #expect(error.firstDifference == Self.corrupted)
            #expect(!exists(directory.appending("copy")))
            #expect(try temporaryFiles(in: directory.path) == [])
        }
    }

    @Test func cloneIsNotReadBack() async throws {
        try await withScratchDirectory { directory in
            let data = randomBytes(count: 100_000, seed: 17)
            let calls = KernelCalls(fileSystem: .xfs, emulatesClone: true)
            let (report, _) = try await RegularFileCopyTests.copy(data, in: directory, calls: calls, options: Self.options())
            #expect(report.method == .clone)
            #expect(report.verification == .sharedExtents)
            #expect(report.crc32 == nil)
            #expect(try readFile(directory.appending("copy")) == data)
        }
    }

    /// Only the pipeline's reads can be paced: a limit makes no kernel call.
    @Test func rateLimitTakesThePipeline() async throws {
        try await withScratchDirectory { directory in
            let data = randomBytes(count: 100_000, seed: 17)
            let calls = KernelCalls(fileSystem: .xfs)
            let (report, _) = try await RegularFileCopyTests.copy(
                data, in: directory, calls: calls, options: Self.options(rateLimit: 1 << 40))
            #expect(report.method == .pipeline)
            #expect(report.verification == .verified)
            #expect(calls.counts.clones == 0 && calls.counts.copies == 0)
            #expect(try readFile(directory.appending("copy")) == data)
        }
    }

    @Test func rateLimitWithReflinkAlwaysIsRefused() async throws {
        try await withScratchDirectory { directory in
            var options = Self.options(rateLimit: 1 << 40)
            options.reflink = .always
            let error = try await #require(throws: FileError.self) {
                try await RegularFileCopyTests.copy(
                    randomBytes(count: 4096, seed: 17), in: directory, calls: KernelCalls(fileSystem: .xfs), options: options)
            }
            #expect(error.operation == .clone)
            #expect(!exists(directory.appending("copy")))
        }
    }
}
