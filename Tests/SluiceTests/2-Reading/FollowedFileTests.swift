#if canImport(Glibc)
import Glibc
#endif
import SluiceTestSupport
import Synchronization
import Testing
@testable import Sluice

/// A followed file through each kind of rotation, the order fixed by the follower's own seam:
/// the rotation happens exactly after a read and before the next `fstat(2)`, so the follower
/// cannot have seen it coming. The idle timeout only ends each run once all was shipped: it is
/// long enough (3 s) that a loaded machine's pauses never end a run early.
@Suite(.timeLimit(.minutes(3)))
struct FollowedFileTests {
    /// What a run shipped, and what it reported.
    struct Shipped {
        var bytes: [UInt8] = []
        var chunks: [FollowedChunk] = []
        var events: [FollowedFile.Event] = []
        var statistics = FollowedFile.Statistics()
        var text: String { String(decoding: bytes, as: UTF8.self) }
    }

    static func options(chunkSize: Int = 4) -> FollowedFile.Options {
        FollowedFile.Options(chunkSize: chunkSize, settleTime: .milliseconds(20), idleTimeout: .seconds(3))
    }

    /// Follows `name` in `directory` until idle; `afterRead(n)` runs after the n-th read (from 1).
    static func follow(
        _ name: String, in directory: ScratchDirectory, options: FollowedFile.Options = options(),
        afterRead: (@Sendable (Int) -> Void)? = nil
    ) async throws -> Shipped {
        let events = Mutex<[FollowedFile.Event]>([])
        let followed = try await FollowedFile.open(directory.appending(Pathname(name)), options: options) { event in
            events.withLock { $0.append(event) }
        }
        if let afterRead {
            let count = Mutex(0)
            followed.follower.afterRead.withLock {
                $0 = { afterRead(count.withLock { $0 += 1; return $0 }) }
            }
        }
        var shipped = Shipped()
        // On the follower's thread, as `sluice follow` runs: a busy cooperative pool never keeps
        // the consumer away long enough for the idle time to pass before all is read.
        try await withTaskExecutorPreference(followed.preferredExecutor) {
            for try await piece in followed {
                shipped.bytes += piece.chunk.bytes
                shipped.chunks.append(piece)
            }
        }
        shipped.events = events.withLock { $0 }
        shipped.statistics = followed.statistics
        return shipped
    }

    /// Every byte of `followed` until idle, read on its thread.
    static func collect(_ followed: FollowedFile, into bytes: inout [UInt8]) async throws {
        var collected: [UInt8] = []
        try await withTaskExecutorPreference(followed.preferredExecutor) {
            for try await piece in followed { collected += piece.chunk.bytes }
        }
        bytes += collected
    }

    static func write(_ text: String, to path: Pathname, appending: Bool = true) {
        let descriptor = path.withCString { open($0, O_WRONLY | O_CREAT | O_CLOEXEC | (appending ? O_APPEND : O_TRUNC), 0o644) }
        precondition(descriptor >= 0, "open \(path)")
        _ = Array(text.utf8).withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
    }

    static func rename(_ from: Pathname, _ to: Pathname) {
        _ = from.withCString { old in to.withCString { Glibc.rename(old, $0) } }
    }

    @Test func aFileIsReadFromItsStartThenWhatIsAppended() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            Self.write("one\ntwo\n", to: log)
            let shipped = try await Self.follow("app.log", in: directory) { read in
                if read == 1 { Self.write("three\n", to: log) }
            }
            #expect(shipped.text == "one\ntwo\nthree\n")
            #expect(shipped.chunks.map(\.position.offset) == [0, 4, 8, 12])
            #expect(shipped.statistics.bytesRead == 14 && shipped.statistics.lagBytes == 0 && shipped.statistics.rotations == 0)
        }
    }

    @Test func fromTheEndStartsWhereTheFileEndsWhenOpened() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            Self.write("old\n", to: log)
            var options = Self.options()
            options.startsAtEnd = true
            let events = Mutex(0)
            let followed = try await FollowedFile.open(log, options: options) { _ in events.withLock { $0 += 1 } }
            Self.write("new\n", to: log)
            var bytes: [UInt8] = []
            try await Self.collect(followed, into: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == "new\n")
        }
    }

    /// Rename and create between a read and the next fstat; the writer still appends to the
    /// old file: it is read to its end, then the new one.
    @Test func renameAndCreateShipsTheOldFileToItsEndThenTheNew() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            Self.write("a1\na2\n", to: log)
            let shipped = try await Self.follow("app.log", in: directory) { read in
                guard read == 1 else { return }
                Self.rename(log, directory.appending("app.log.1"))
                Self.write("b1\n", to: log)
                Self.write("a3\n", to: directory.appending("app.log.1"))
            }
            #expect(shipped.text == "a1\na2\na3\nb1\n")
            #expect(shipped.statistics.rotations == 1 && shipped.statistics.lostBytes == 0)
            #expect(Set(shipped.chunks.map(\.position.generation)).count == 2)
            #expect(shipped.events.contains { if case .rotated = $0 { true } else { false } })
        }
    }

    /// Bytes appended to the old file after the follower moved on: shipped, marked late.
    @Test func bytesAppendedToALeftFileAreShippedLate() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            let old = directory.appending("app.log.1")
            Self.write("a1\n", to: log)
            let events = Mutex<[FollowedFile.Event]>([])
            let followed = try await FollowedFile.open(log, options: Self.options()) { event in
                events.withLock { $0.append(event) }
                if case .rotated = event { Self.write("a2\n", to: old) }
            }
            followed.follower.afterRead.withLock {
                $0 = { if (try? FileStatus.of(old)) == nil { Self.rename(log, old); Self.write("b1\n", to: log) } }
            }
            var pieces: [FollowedChunk] = []
            try await withTaskExecutorPreference(followed.preferredExecutor) { for try await piece in followed { pieces.append(piece) } }
            #expect(String(decoding: pieces.flatMap(\.chunk.bytes), as: UTF8.self) == "a1\nb1\na2\n")
            #expect(pieces.map(\.isLate) == [false, false, true])
            #expect(followed.statistics.lateBytes == 3)
            #expect(events.withLock { $0 }.contains(.late(bytes: 3, generation: pieces[0].position.generation)))
        }
    }

    /// Two shifts before the follower looks, the second leaving the name empty: the file of the
    /// first is found where it was renamed to (the events say where), and shipped in order.
    @Test func aFileShiftedOnWhileTheNameIsEmptyIsFound() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            let (one, two) = (directory.appending("app.log.1"), directory.appending("app.log.2"))
            Self.write("a1\n", to: log)
            let events = Mutex<[FollowedFile.Event]>([])
            let followed = try await FollowedFile.open(log, options: Self.options()) { event in events.withLock { $0.append(event) } }
            followed.follower.afterRead.withLock {
                $0 = {
                    guard (try? FileStatus.of(two)) == nil else { return }
                    Self.rename(log, one)
                    Self.write("b1\n", to: log)
                    Self.rename(one, two)
                    Self.rename(log, one)  // no file at the name now
                }
            }
            var bytes: [UInt8] = []
            try await Self.collect(followed, into: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == "a1\nb1\n")
            #expect(!events.withLock { $0 }.contains { if case .lost = $0 { true } else { false } })
        }
    }

    /// Without inotify, the name is looked at every interval: a rotation is still shipped whole.
    @Test func withoutInotifyTheNameIsLookedAtEveryInterval() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            Self.write("a1\n", to: log)
            var options = Self.options()
            options.avoidsInotify = true
            options.pollingInterval = .milliseconds(10)
            let shipped = try await Self.follow("app.log", in: directory, options: options) { read in
                guard read == 1 else { return }
                Self.rename(log, directory.appending("app.log.1"))
                Self.write("b1\n", to: log)
                Self.write("a2\n", to: directory.appending("app.log.1"))
            }
            #expect(shipped.text == "a1\na2\nb1\n")
            #expect(shipped.events.first == .polling(every: .milliseconds(10)))
        }
    }

    /// A shift (`.1` to `.2`, the file to `.1`, create) twice before the first file is drained.
    @Test func twoShiftsBeforeTheFirstFileIsDrainedShipEveryFileInOrder() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            let (one, two) = (directory.appending("app.log.1"), directory.appending("app.log.2"))
            Self.write("a1\na2\n", to: log)
            let shipped = try await Self.follow("app.log", in: directory) { read in
                guard read == 1 else { return }
                Self.rename(log, one)
                Self.write("b1\nb2\n", to: log)
                Self.rename(one, two)
                Self.rename(log, one)
                Self.write("c1\n", to: log)
            }
            #expect(shipped.text == "a1\na2\nb1\nb2\nc1\n")
            #expect(shipped.statistics.rotations == 2 && shipped.statistics.lostBytes == 0)
        }
    }

    @Test func deleteAndRecreateShipsBoth() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            Self.write("a1\na2\n", to: log)
            let shipped = try await Self.follow("app.log", in: directory) { read in
                guard read == 1 else { return }
                _ = log.withCString { unlink($0) }
                Self.write("b1\n", to: log)
            }
            #expect(shipped.text == "a1\na2\nb1\n")
            #expect(shipped.events.contains(.nameRemoved(log)))
        }
    }

    /// copytruncate right after a read: the rest comes from the copy, then the file from 0.
    @Test func copytruncateReadsTheRestFromTheCopy() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            Self.write("line-1\nline-2\nline-3\n", to: log)
            let shipped = try await Self.follow("app.log", in: directory, options: Self.options(chunkSize: 7)) { read in
                guard read == 1 else { return }
                Self.write("line-4\n", to: log)
                Self.write("line-1\nline-2\nline-3\nline-4\n", to: directory.appending("app.log.1"))
                Self.write("new-1\n", to: log, appending: false)
            }
            #expect(shipped.text == "line-1\nline-2\nline-3\nline-4\nnew-1\n")
            #expect(shipped.statistics.lostBytes == 0)
            #expect(shipped.events.contains(.truncated(copy: directory.appending("app.log.1"), recovered: 21)))
            // It was behind the copy's end: what came between the copy and the truncation is unknowable.
            #expect(shipped.statistics.uncountedLosses == 1)
        }
    }

    /// copytruncate with no copy beside it: the bytes not read are reported, a lower bound.
    @Test func copytruncateWithoutACopyReportsTheLoss() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            Self.write("line-1\nline-2\nline-3\n", to: log)
            let shipped = try await Self.follow("app.log", in: directory, options: Self.options(chunkSize: 7)) { read in
                guard read == 1 else { return }
                Self.write("n\n", to: log, appending: false)
            }
            #expect(shipped.text == "line-1\nn\n")
            #expect(shipped.statistics.lostBytes == 14)
            #expect(shipped.events.contains(.lost(bytes: 14, reason: .truncated)))
        }
    }

    /// Truncated and written past the position again before the follower looked: the first
    /// bytes no longer match, so it is a truncation, not a continuation.
    @Test func aFileRewrittenPastThePositionIsSeenByItsFirstBytes() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            Self.write("aaaa", to: log)
            let shipped = try await Self.follow("app.log", in: directory) { read in
                guard read == 1 else { return }
                Self.write("bbbbbbbb", to: log, appending: false)
            }
            #expect(shipped.text == "aaaabbbbbbbb")
            #expect(shipped.events.contains { if case .truncated = $0 { true } else { false } })
        }
    }

    @Test func aFileThatDoesNotExistYetIsWaitedFor() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            let events = Mutex<[FollowedFile.Event]>([])
            let followed = try await FollowedFile.open(log, options: Self.options()) { event in
                events.withLock { $0.append(event) }
                if case .waitingForFile = event { Self.write("late\n", to: log) }
            }
            var bytes: [UInt8] = []
            try await Self.collect(followed, into: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == "late\n")
            #expect(events.withLock { $0 } == [.waitingForFile(log), .appeared(log)])
        }
    }

    @Test func aDirectoryOrAFIFOIsRefused() async throws {
        try await withScratchDirectory { directory in
            _ = directory.appending("d").withCString { mkdir($0, 0o755) }
            _ = directory.appending("p").withCString { mkfifo($0, 0o644) }
            await #expect { try await FollowedFile.open(directory.appending("d")) } throws: {
                ($0 as? FileError)?.code == .isDirectory
            }
            await #expect { try await FollowedFile.open(directory.appending("p")) } throws: {
                ($0 as? FileError)?.code == .unsupported
            }
            await #expect { try await FollowedFile.open(directory.appending("missing/app.log")) } throws: {
                ($0 as? FileError)?.code == .notFound
            }
        }
    }

    /// More files queued than the limit: the oldest unread is let go, and said.
    @Test func pastTheQueueLimitTheOldestUnreadIsReportedLost() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            Self.write("aaa\n", to: log)
            var options = Self.options(chunkSize: 1)
            options.maximumQueuedGenerations = 1
            // One rotation after each of the first two reads: the follower takes the directory's
            // events before every read, so the second file is queued when the third comes.
            // The second file is created empty and opened so; it is written afterwards, before
            // it is let go: the loss counts what it holds then.
            let shipped = try await Self.follow("app.log", in: directory, options: options) { read in
                if read == 1 {
                    Self.rename(log, directory.appending("app.log.1"))
                    Self.write("", to: log)
                } else if read == 2 {
                    Self.write("bb\n", to: log)
                    Self.rename(log, directory.appending("app.log.2"))
                    Self.write("ccc\n", to: log)
                }
            }
            #expect(shipped.text == "aaa\nccc\n")
            #expect(shipped.events.contains(.lost(bytes: 3, reason: .tooManyGenerations)))
            #expect(shipped.statistics.lostBytes == 3)
        }
    }

    /// A pipeline pulls from a followed file: gzip through the pipeline into an appending sink.
    @Test func aPipelinePullsFromAFollowedFile() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            let text = (1...2000).map { "line \($0)\n" }.joined()
            Self.write(text, to: log)
            let followed = try await FollowedFile.open(log, options: Self.options(chunkSize: 4096))
            let sink = try await AppendingFileSink.open(directory.appending("out.gz"), appending: false)
            let pipeline = Pipeline(from: followed.chunks, to: sink, totalBytes: nil) { ParallelGzipEncoder(level: .fastest) }
            let report = try await pipeline.run()
            #expect(report.bytesRead == Int64(text.utf8.count))
            var compressed: [UInt8] = []
            for try await chunk in try await FileChunks.open(directory.appending("out.gz")) { compressed += chunk.bytes }
            let decoded = try await drive(GzipDecoder(), compressed, chunkSize: 4096)
            #expect(String(decoding: decoded.output, as: UTF8.self) == text)
        }
    }

    /// Cancelled before it iterates: CancellationError at once.
    @Test func cancellationBeforeIteratingEndsIt() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            Self.write("x", to: log)
            let followed = try await FollowedFile.open(log)
            let task = Task {
                var count = 0
                for try await piece in followed { count += piece.chunk.count }
                return count
            }
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
        }
    }

    /// Cancelled once the consumer has the file's bytes and waits for more (in `poll(2)`, or
    /// about to be): the wake pipe ends the wait, with no idle timeout to end it otherwise.
    @Test func cancellationEndsAWaitForMore() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            Self.write("x", to: log)
            let followed = try await FollowedFile.open(log)
            let (received, receivedOne) = AsyncStream.makeStream(of: Void.self)
            let task = Task {
                for try await _ in followed { receivedOne.yield() }
            }
            for await _ in received { break }
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(followed.statistics.bytesRead == 1)
        }
    }
}
