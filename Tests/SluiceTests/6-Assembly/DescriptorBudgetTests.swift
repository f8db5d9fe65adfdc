import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch
import Testing
@testable import Sluice
import SluiceTestSupport

/// One descriptor budget out of `ulimit -n`, shared by everything that holds descriptors, and
/// `EMFILE` met by waiting only while the engine holds descriptors it will release.
@Suite(.timeLimit(.minutes(3)))
struct DescriptorBudgetTests {
    /// The shares at the limits a user meets, from a terminal (standard input, output and
    /// error and the signal descriptor open).
    /// Under a high limit (`ulimit -n` 20,000, as on this project's machines), a durable batch
    /// holds up to 512 files: at most 1,024 sealed, whatever the limit.
    @Test(arguments: [20_000, 1 << 20])
    func sealedFilesUnderAHighLimit(limit: Int) {
        let budget = DescriptorBudget(limit: limit, inUse: 4)
        #expect(budget.sealedFiles == 1_024)
        #expect(budget.filesInFlight == 64)
    }

    @Test(arguments: [
        (16, false, 2, 1, 1, 1, 0, true), (32, true, 3, 1, 2, 2, 0, false), (64, true, 7, 3, 3, 6, 14, false),
        (1024, true, 32, 63, 64, 64, 254, false),
    ])
    func sharesAtCommonLimits(
        limit: Int, isAboveMinimumPlusOne: Bool, perSide: Int, toSync: Int, inFlight: Int, inFlightWithoutSync: Int,
        sealed: Int, oneAtATime: Bool
    ) {
        let budget = DescriptorBudget(limit: limit, inUse: 4)
        #expect(budget.allowsTreeCopy)
        #expect((budget.available > DescriptorBudget.minimumForTree) == isAboveMinimumPlusOne)
        #expect(budget.directoriesPerSide == perSide)
        #expect(budget.directoriesToSync == toSync)
        #expect(budget.filesInFlight == inFlight)
        #expect(budget.filesInFlightWithoutSync == inFlightWithoutSync)
        #expect(budget.sealedFiles == sealed)
        #expect(budget.copiesOneFileAtATime == oneAtATime)
        if oneAtATime {
            // The walk opens nothing while its one file holds its source and temporary file,
            // whose directories are the walk's own.
            #expect(budget.heldByWalk - 1 + 2 <= budget.available)
        } else {
            // What the shares hold at most, when no two files share a directory, fits.
            let held = budget.heldByWalk + budget.directoriesToSync + DescriptorBudget.perFileInFlight * budget.filesInFlight
                + budget.sealedFiles
            #expect(held <= budget.available)
            #expect(budget.heldByWalk + DescriptorBudget.perFileInFlight * budget.filesInFlightWithoutSync <= budget.available)
        }
    }

    @Test func belowTheMinimumATreeCopyIsNotAllowed() {
        #expect(!DescriptorBudget(limit: 15, inUse: 4).allowsTreeCopy)
        #expect(DescriptorBudget(limit: 16, inUse: 4).allowsTreeCopy)
        #expect(DescriptorBudget(limit: 3, inUse: 4).available == 0)
    }

    @Test func theProcessBudgetCountsWhatIsOpen() throws {
        let budget = DescriptorBudget.measured()
        var value = rlimit()
        #expect(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &value) == 0)
        #expect(budget.limit == Int(min(value.rlim_cur, 1 << 20)))
        #expect(budget.reserved >= 3 + DescriptorBudget.runtimeReserve)  // standard input, output, error at least
    }

    /// The count reads the names of `/proc/self/fd`: numbers below the limit, not the
    /// directory's own descriptor, nothing else; without the listing it probes each number.
    @Test func openDescriptorsAreCountedFromTheirListing() async throws {
        try await withScratchDirectory { directory in
            for name in ["0", "1", "2", "1000", "1001", "x"] {
                let created = creat(directory.appending(Pathname(name)).description, 0o600)
                #expect(created >= 0)
                close(created)
            }
            #expect(DescriptorBudget.openDescriptorCount(below: 1001, listedIn: directory.path.description) == 4)
        }
        #expect(DescriptorBudget.openDescriptorCount(below: 3) == 3)  // standard input, output and error
        #expect(DescriptorBudget.openDescriptorCount(below: 3, listedIn: "/nonexistent") == 3)
        #expect(DescriptorBudget.probedDescriptorCount(below: 3) == 3)
    }

    /// System calls whose `n`th unnamed-file creation fails with `EMFILE` (every one from the
    /// `n`th on, with `always`). `observe` is called with each creation's number (from 1)
    /// before it is made or failed.
    static func failingCreation(
        at n: Int, always: Bool = false, observe: @escaping @Sendable (Int) -> Void = { _ in }
    ) -> SystemCalls {
        var calls = SystemCalls.live
        let count = LockedValue(0)
        let open = calls.open
        calls.open = { path, flags, mode in
            if SystemCalls.asksForUnnamedFile(flags) {
                let index = count.withLock { count in
                    count += 1
                    return count
                }
                observe(index)
                if index == n || (always && index >= n) { return .failure(ErrorNumber(rawValue: EMFILE)) }
            }
            return open(path, flags, mode)
        }
        return calls
    }

    /// `EMFILE` for the second file while the first waits, sealed, for a batch due in ten
    /// minutes: the engine commits that batch at once (the first file completes long before its
    /// deadline), and the second file, tried again, is copied. Width 1, so the first file is
    /// sealed before the second starts.
    @Test func emfileWaitsWhileTheEngineReleasesItsSealedFiles() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let sources = try CopierTests.makeSources([10_000, 20_000], in: directory)
        guard DescriptorBudget.current.sealedFiles > 0 else {
            try Test.cancel("the open-file limit here is too low for sealed files to wait in a batch")
        }
        var options = Copier.Options(width: 1, chunkSize: 4096)
        options.syncBatchWaitMilliseconds = 600_000
        let engine = Copier(
            options: options, progress: ManyFilesProgress(), ownsProgress: true, system: Self.failingCreation(at: 2))
        let outcomes = CopierTests.Outcomes()
        let firstCommitted = Latch()
        for (index, source) in sources.enumerated() {
            try await engine.submit(.init(
                source: source, destination: directory.appending(Pathname("out/f\(index)")), sourceStatus: try FileStatus.of(source),
                completion: { outcome in
                    outcomes.add(outcome)
                    if outcome.index == 0 { firstCommitted.open() }
                }))
        }
        // Before finish(): only the release for the second file's EMFILE committed the batch.
        await firstCommitted.wait()
        #expect(outcomes.all.map(\.index) == [0])
        let totals = await engine.finish()
        #expect(totals.committed == 2)
        #expect(outcomes.all.allSatisfy { (try? $0.result.get()) != nil })
        #expect(try readFile(directory.appending("out/f1")) == CopierTests.content(1, size: 20_000))
    }

    /// `EMFILE` for the second file while the first's batch is being committed: the first
    /// file has completed (its completion runs), but the batch still holds its entry, and with
    /// it the descriptors of its directories. The hostile order is fixed: the second file's
    /// creation fails only once the first's completion has begun, and that completion returns
    /// only once the second file waits for descriptors. The wait lasts until the batch has let
    /// its files go (not until they completed, when a retry would still find their
    /// directories open); then the second file, tried again, is copied. The files are in two
    /// directories, so the failing creation is the second file's.
    @Test func emfileWaitsUntilACommittedBatchHasLetItsFilesGo() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let sources = try CopierTests.makeSources([10_000, 20_000], in: directory)
        for index in 0..<2 { mkdir(directory.appending(Pathname("out\(index)")).description, 0o755) }
        let firstCompleting = DispatchSemaphore(value: 0)
        let events = CopierEvents()
        var calls = SystemCalls.live
        let creations = LockedValue(0)  // of the second file's temporary file
        let open = calls.open
        calls.open = { path, flags, mode in
            if SystemCalls.asksForUnnamedFile(flags), String(cString: path).hasSuffix("out1"),
                creations.withLock({ creations in defer { creations += 1 }; return creations == 0 })
            {
                firstCompleting.wait()
                return .failure(ErrorNumber(rawValue: EMFILE))
            }
            return open(path, flags, mode)
        }
        let engine = Copier(
            options: .init(width: 2, chunkSize: 4096), progress: ManyFilesProgress(), ownsProgress: true, system: calls,
            observer: events.observer)
        let outcomes = CopierTests.Outcomes()
        for (index, source) in sources.enumerated() {
            try await engine.submit(.init(
                source: source, destination: directory.appending(Pathname("out\(index)/f")), sourceStatus: try FileStatus.of(source),
                completion: { outcome in
                    outcomes.add(outcome)
                    guard outcome.index == 0 else { return }
                    firstCompleting.signal()
                    // On the batch's thread, inside its commit: until the second file waits.
                    events.waitBlocking(for: .waitingForDescriptors)
                }))
        }
        let totals = await engine.finish()
        #expect(creations.withLock { $0 } == 2)  // failed once, then tried again
        #expect(totals.committed == 2, "\(outcomes.all.map(\.result))")
        #expect(try readFile(directory.appending("out1/f")) == CopierTests.content(1, size: 20_000))
    }

    /// `EMFILE` when the engine holds nothing it would release: the file fails with the
    /// message, at once, leaving nothing.
    @Test func emfileWithNothingToReleaseFailsTheFile() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let sources = try CopierTests.makeSources([10_000], in: directory)
        let engine = Copier(
            options: .init(width: 1, chunkSize: 4096), progress: ManyFilesProgress(), ownsProgress: true,
            system: Self.failingCreation(at: 1, always: true))
        let outcomes = CopierTests.Outcomes()
        let destination = directory.appending("out/f0")
        try await engine.submit(.init(
            source: sources[0], destination: destination, sourceStatus: try FileStatus.of(sources[0]), completion: outcomes.add))
        let totals = await engine.finish()
        #expect(totals.failed == 1)
        let error = try #require(outcomes.all.first.flatMap { outcome -> FileError? in
            if case .failure(let error) = outcome.result { return error as? FileError }
            return nil
        })
        #expect(error.description == "cannot create '\(destination)': Too many open files")
        #expect(try entries(in: directory.appending("out")) == [])
    }

    /// `EMFILE` for every file of two in flight: a file that waits for descriptors releases
    /// none, so neither waits on the other; both fail with the message (no hang, which the
    /// suite's time limit would catch).
    @Test func filesThatAllWaitForDescriptorsFailInsteadOfWaitingOnEachOther() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let sources = try CopierTests.makeSources([10_000, 20_000], in: directory)
        let engine = Copier(
            options: .init(width: 2, chunkSize: 4096, copy: .init(forcesPipeline: true), sink: .init(synchronizes: false)), progress: ManyFilesProgress(),
            ownsProgress: true, system: Self.failingCreation(at: 1, always: true))
        for (index, source) in sources.enumerated() {
            try await engine.submit(.init(
                source: source, destination: directory.appending(Pathname("out/f\(index)")),
                sourceStatus: try FileStatus.of(source)))
        }
        let totals = await engine.finish()
        #expect(totals.failed == 2)
        #expect(try entries(in: directory.appending("out")) == [])
    }

    /// System calls whose second unnamed-file creation fails with `EMFILE` (the time of the
    /// failure in `failed`, that of the next creation in `retried`), whose first waits for
    /// `held` when given, and whose reads take 20 ms each, with `slowReadsWhileWaiting`, from
    /// the failure to the next creation (while the file that failed waits for descriptors).
    static func secondCreationFails(
        failed: LockedValue<ContinuousClock.Instant?>, retried: LockedValue<ContinuousClock.Instant?>,
        held: DispatchSemaphore? = nil, slowReadsWhileWaiting: Bool = false
    ) -> SystemCalls {
        var calls = failingCreation(at: 2) { index in
            if index == 1 { held?.wait() }
            if index == 2 { failed.withLock { $0 = .now } }
            if index == 3 { retried.withLock { $0 = .now } }
        }
        let read = calls.read
        calls.read = { descriptor, buffer, count in
            if slowReadsWhileWaiting, failed.withLock({ $0 }) != nil, retried.withLock({ $0 }) == nil { usleep(20_000) }
            return read(descriptor, buffer, count)
        }
        return calls
    }

    /// `EMFILE` for one file while another moves bytes: the file waits past the engine's
    /// patience (3 s here, long beside the gaps between two snapshots of a loaded suite), for as
    /// long as the other's bytes move (its reads slowed to 20 ms each while a file waits: about
    /// 400 of them, twice the patience), and is copied once the other has ended.
    @Test func emfileWaitsAsLongAsAnotherFileMovesBytes() async throws {
        guard DescriptorBudget.current.filesInFlightWithoutSync >= 2 else {
            try Test.cancel("the open-file limit here is too low for two files in flight")
        }
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let sources = try CopierTests.makeSources([1_600_000, 1_600_000], in: directory)
        let (failed, retried) = (LockedValue<ContinuousClock.Instant?>(nil), LockedValue<ContinuousClock.Instant?>(nil))
        var options = Copier.Options(width: 2, chunkSize: 4096, copy: .init(forcesPipeline: true), sink: .init(synchronizes: false))  // by read(2)
        options.descriptorWaitMilliseconds = 3_000
        let engine = Copier(
            options: options, progress: ManyFilesProgress(), ownsProgress: true,
            system: Self.secondCreationFails(failed: failed, retried: retried, slowReadsWhileWaiting: true))
        for (index, source) in sources.enumerated() {
            try await engine.submit(.init(
                source: source, destination: directory.appending(Pathname("out/f\(index)")),
                sourceStatus: try FileStatus.of(source)))
        }
        let totals = await engine.finish()
        #expect(totals.committed == 2)
        let waited = try #require(retried.withLock { $0 }) - (try #require(failed.withLock { $0 }))
        #expect(waited > .seconds(3), "\(waited)")
        #expect(try readFile(directory.appending("out/f0")) == CopierTests.content(0, size: 1_600_000))
        #expect(try readFile(directory.appending("out/f1")) == CopierTests.content(1, size: 1_600_000))
    }

    /// `EMFILE` for one file while the other is stuck (its creation held until the test lets
    /// it go): no byte moves, so after the engine's patience (300 ms here) the waiting file fails
    /// with the message, and the stuck one, let go, is still copied.
    @Test func emfileWhileTheOtherFileIsStuckFailsAfterThePatience() async throws {
        guard DescriptorBudget.current.filesInFlightWithoutSync >= 2 else {
            try Test.cancel("the open-file limit here is too low for two files in flight")
        }
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let sources = try CopierTests.makeSources([10_000, 20_000], in: directory)
        let held = DispatchSemaphore(value: 0)
        let (failed, retried) = (LockedValue<ContinuousClock.Instant?>(nil), LockedValue<ContinuousClock.Instant?>(nil))
        var options = Copier.Options(width: 2, chunkSize: 4096, sink: .init(synchronizes: false))
        options.descriptorWaitMilliseconds = 300
        let engine = Copier(
            options: options, progress: ManyFilesProgress(), ownsProgress: true,
            system: Self.secondCreationFails(failed: failed, retried: retried, held: held))
        let failedFile = Latch()
        let outcomes = CopierTests.Outcomes()
        for (index, source) in sources.enumerated() {
            try await engine.submit(.init(
                source: source, destination: directory.appending(Pathname("out/f\(index)")),
                sourceStatus: try FileStatus.of(source),
                completion: { outcome in
                    outcomes.add(outcome)
                    if case .failure = outcome.result { failedFile.open() }
                }))
        }
        let hangGuard = Task {
            try? await Task.sleep(for: .seconds(60))
            failedFile.open()  // then the expectations below fail instead of the suite hanging
        }
        await failedFile.wait()
        hangGuard.cancel()
        held.signal()
        let totals = await engine.finish()
        #expect(totals.committed == 1 && totals.failed == 1)
        #expect(retried.withLock { $0 } == nil)
        let error = try #require(outcomes.all.compactMap { outcome -> FileError? in
            if case .failure(let error) = outcome.result { return error as? FileError }
            return nil
        }.first)
        #expect(error.description.hasSuffix("': Too many open files"), "\(error)")
    }

    /// The timed wait that replaced the batch's Dispatch timer: work runs after its delay, in
    /// order with the work queued, and work still waiting when the executor is released is
    /// dropped, not kept alive.
    @Test func timedWorkRunsAfterItsDelayOnTheExecutorsThread() async throws {
        let executor = BlockingIOExecutor(label: "test.timed")
        let start = ContinuousClock.now
        let ran: ContinuousClock.Instant = await withCheckedContinuation { continuation in
            executor.execute(after: .milliseconds(30)) {
                precondition(executor.isCurrentThread)
                continuation.resume(returning: .now)
            }
        }
        #expect(ran - start >= .milliseconds(30))
        /// Opens its latch when it is freed.
        final class Token: Sendable {
            let freed: Latch
            init(_ freed: Latch) { self.freed = freed }
            deinit { freed.open() }
        }
        let freed = Latch()
        do {
            let released = BlockingIOExecutor(label: "test.dropped")
            let token = Token(freed)
            released.execute(after: .seconds(600)) { _ = token }
        }
        // The executor's thread ends, and with it the waiting work and what it holds (the
        // suite's time limit guards against work kept until its deadline).
        await freed.wait()
        // Cancelled timed work is released at once, by the caller, and never runs; work
        // queued later still does.
        let kept = BlockingIOExecutor(label: "test.cancelled")
        let cancelledFreed = Latch()
        let ranCancelled = LockedValue(false)
        do {
            let token = Token(cancelledFreed)
            kept.execute(after: .milliseconds(20)) { _ = token; ranCancelled.withLock { $0 = true } }
        }
        kept.cancelTimedWork()
        #expect(cancelledFreed.isOpen)
        await withCheckedContinuation { continuation in
            kept.execute(after: .milliseconds(40)) { continuation.resume() }
        }
        #expect(!ranCancelled.withLock { $0 })
    }

    /// A finished batch leaves no deadline behind holding it (LeakSanitizer reported the one a
    /// process exiting within 50 ms of the finish left).
    @Test func finishDropsTheBatchsDeadline() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let sources = try CopierTests.makeSources([5_000], in: directory)
        var options = Copier.Options(width: 1)
        options.syncBatchWaitMilliseconds = 600_000  // the deadline would hold the batch 10 min
        /// Opens its latch when the engine that holds it (in its observer) is freed.
        final class Token: Sendable {
            let freed: Latch
            init(_ freed: Latch) { self.freed = freed }
            deinit { freed.open() }
        }
        let freed = Latch()
        do {
            let token = Token(freed)
            let engine = Copier(
                options: options, progress: ManyFilesProgress(), ownsProgress: true, system: .live, observer: { _ in _ = token })
            _ = try await engine.submit(.init(
                source: sources[0], destination: directory.appending("out/f0"), sourceStatus: try FileStatus.of(sources[0])))
            let totals = await engine.finish()
            #expect(totals.committed == 1)
        }
        // The batch's thread lets the engine go once its last job has returned, not after the
        // deadline's ten minutes (the suite's time limit guards against that).
        await freed.wait()
        #expect(try readFile(directory.appending("out/f0")) == CopierTests.content(0, size: 5_000))
    }
}
