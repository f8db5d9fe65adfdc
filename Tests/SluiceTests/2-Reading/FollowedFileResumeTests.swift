#if canImport(Glibc)
import Glibc
#endif
import SluiceTestSupport
import Synchronization
import Testing
@testable import Sluice

/// Checkpoints, acknowledgements and resuming: a follower reads part of a file, is dropped (as
/// a killed process is), the file is rotated or grows while none runs, and a follower resumed
/// from the checkpoint of the last chunk acknowledged reads on. The order is fixed: everything
/// is written before the resumed follower starts, which runs until idle.
@Suite(.timeLimit(.minutes(3)))
struct FollowedFileResumeTests {
    typealias Shipped = FollowedFileTests.Shipped

    /// Reads `count` chunks of `path` and acknowledges them; the checkpoint after them.
    static func read(_ count: Int, of path: Pathname) async throws -> (bytes: [UInt8], checkpoint: FollowedFile.Checkpoint) {
        let followed = try await FollowedFile.open(path, options: FollowedFileTests.options())
        var bytes: [UInt8] = []
        try await withTaskExecutorPreference(followed.preferredExecutor) {
            var iterator = followed.makeAsyncIterator()
            for _ in 0..<count {
                let piece = try #require(try await iterator.next())
                bytes += piece.chunk.bytes
                followed.acknowledge(piece)
            }
        }
        return (bytes, followed.checkpoint)
    }

    /// Resumes following `path` from `checkpoint` until idle, acknowledging every chunk; what
    /// it shipped, and the checkpoint at its end in `last`.
    static func resume(
        _ path: Pathname, from checkpoint: FollowedFile.Checkpoint, last: UnsafeMutablePointer<FollowedFile.Checkpoint>? = nil
    ) async throws -> Shipped {
        let events = Mutex<[FollowedFile.Event]>([])
        let followed = try await FollowedFile.open(path, resumingFrom: checkpoint, options: FollowedFileTests.options()) { event in
            events.withLock { $0.append(event) }
        }
        var bytes: [UInt8] = []
        try await withTaskExecutorPreference(followed.preferredExecutor) {
            for try await piece in followed {
                bytes += piece.chunk.bytes
                followed.acknowledge(piece)
            }
        }
        var shipped = Shipped()
        shipped.bytes = bytes
        shipped.events = events.withLock { $0 }
        shipped.statistics = followed.statistics
        last?.pointee = followed.checkpoint
        return shipped
    }

    @Test func theCheckpointAdvancesOnlyOnAcknowledgement() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            FollowedFileTests.write("abcdefghij", to: log)
            let followed = try await FollowedFile.open(log, options: FollowedFileTests.options())
            #expect(followed.checkpoint.position?.offset == 0)
            try await withTaskExecutorPreference(followed.preferredExecutor) {
                var iterator = followed.makeAsyncIterator()
                let first = try #require(try await iterator.next())
                let second = try #require(try await iterator.next())
                #expect(second.checkpoint.position?.offset == 8)
                #expect(followed.checkpoint.position?.offset == 0)  // read, not acknowledged
                followed.acknowledge(first)
                #expect(followed.checkpoint.position?.offset == 4)
                #expect(followed.checkpoint == first.checkpoint)
            }
        }
    }

    @Test func aCheckpointReadsBackFromItsText() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            FollowedFileTests.write("one\ntwo\n", to: log)
            let checkpoint = try await Self.read(1, of: log).checkpoint
            #expect(FollowedFile.Checkpoint(encoded: checkpoint.encoded) == checkpoint)
            #expect(checkpoint.encoded.hasPrefix("sluice-follow-checkpoint 1\nread "))
            #expect(FollowedFile.Checkpoint(encoded: "sluice-follow-checkpoint 2\n") == nil)
            #expect(FollowedFile.Checkpoint(encoded: checkpoint.encoded.replacingOccurrences(of: " b ", with: " x ")) == nil)
        }
    }

    @Test func aResumedFollowerReadsOnFromTheCheckpoint() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            FollowedFileTests.write("abcdefghij", to: log)
            let (before, checkpoint) = try await Self.read(1, of: log)
            FollowedFileTests.write("KLM", to: log)
            let after = try await Self.resume(log, from: checkpoint)
            #expect(String(decoding: before + after.bytes, as: UTF8.self) == "abcdefghijKLM")
            #expect(after.statistics.lostBytes == 0 && after.statistics.uncountedLosses == 0)
        }
    }

    /// Rename and create, twice, while no follower runs: the rest of the file read, then each
    /// file born since, in order; a compressed one beside them is not read.
    @Test func generationsRotatedWhileStoppedAreReadInOrder() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            FollowedFileTests.write("first-1\n", to: log)
            let (before, checkpoint) = try await Self.read(1, of: log)
            FollowedFileTests.write("first-2\n", to: log)
            FollowedFileTests.rename(log, directory.appending("app.log.1"))
            FollowedFileTests.write("second\n", to: log)
            FollowedFileTests.rename(directory.appending("app.log.1"), directory.appending("app.log.2"))
            FollowedFileTests.rename(log, directory.appending("app.log.1"))
            FollowedFileTests.write("compressed\n", to: directory.appending("app.log.3.gz"))
            FollowedFileTests.write("third\n", to: log)
            let after = try await Self.resume(log, from: checkpoint)
            #expect(String(decoding: before + after.bytes, as: UTF8.self) == "first-1\nfirst-2\nsecond\nthird\n")
            #expect(after.statistics.lostBytes == 0 && after.statistics.uncountedLosses == 0)
        }
    }

    /// The file being read was rotated and deleted while no follower ran: reported lost, with
    /// what it was seen to hold past the checkpoint, and the next file read.
    @Test func aFileGoneWhileStoppedIsReportedLost() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            FollowedFileTests.write("abcdefghij", to: log)
            let (_, checkpoint) = try await Self.read(1, of: log)
            _ = log.withCString { unlink($0) }
            FollowedFileTests.write("new\n", to: log)
            let after = try await Self.resume(log, from: checkpoint)
            #expect(after.text == "new\n")
            #expect(after.events.contains(.lost(bytes: 6, reason: .goneWhileStopped)))
            #expect(after.statistics.lostBytes == 6 && after.statistics.uncountedLosses == 1)
        }
    }

    /// copytruncate while no follower ran: the rest comes from the copy, then the file from 0;
    /// what was written between the copy and the truncation cannot be counted, and is said.
    @Test func aCopytruncateWhileStoppedIsReadFromTheCopy() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            FollowedFileTests.write("abcdefghij", to: log)
            let (before, checkpoint) = try await Self.read(2, of: log)
            FollowedFileTests.write("KLM", to: log)
            FollowedFileTests.write("abcdefghijKLM", to: directory.appending("app.log.1"))
            FollowedFileTests.write("new\n", to: log, appending: false)
            let after = try await Self.resume(log, from: checkpoint)
            #expect(String(decoding: before + after.bytes, as: UTF8.self) == "abcdefghijKLMnew\n")
            #expect(after.events.contains(.truncated(copy: directory.appending("app.log.1"), recovered: 5)))
            #expect(after.statistics.uncountedLosses == 1)
        }
    }

    /// Rewritten from its start on the same inode, longer than the checkpoint's offset, with no
    /// copy: the bytes before the offset differ, so it is a truncation, read from 0 and said.
    @Test func aFileRewrittenWhileStoppedIsReadFromItsStart() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            FollowedFileTests.write("abcdefghij", to: log)
            let (_, checkpoint) = try await Self.read(2, of: log)
            FollowedFileTests.write("ABCDEFGHIJKLMNOP", to: log, appending: false)
            let after = try await Self.resume(log, from: checkpoint)
            #expect(after.text == "ABCDEFGHIJKLMNOP")
            #expect(after.events.contains(.truncated(copy: nil, recovered: 0)))
        }
    }

    /// `--from-end` sets where a first follower starts, and its checkpoint says so; a resumed
    /// one starts at the checkpoint.
    @Test func startingAtTheEndIsInTheFirstCheckpoint() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            FollowedFileTests.write("old\n", to: log)
            var options = FollowedFileTests.options()
            options.startsAtEnd = true
            let checkpoint = try await FollowedFile.open(log, options: options).checkpoint
            #expect(checkpoint.position?.offset == 4)
            FollowedFileTests.write("new\n", to: log)
            let followed = try await FollowedFile.open(log, resumingFrom: FollowedFile.Checkpoint(reading: [], retired: []), options: options)
            #expect(followed.checkpoint.position?.offset == 0)  // a checkpoint with no file: from the first byte
            let after = try await Self.resume(log, from: checkpoint)
            #expect(after.text == "new\n")
        }
    }

    /// With nothing to read, `next(caughtUpAfter:)` says so once the time has passed, and the
    /// chunk appended afterwards comes next.
    @Test func nothingToReadIsCaughtUp() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            FollowedFileTests.write("ab", to: log)
            let followed = try await FollowedFile.open(log, options: FollowedFileTests.options())
            try await withTaskExecutorPreference(followed.preferredExecutor) {
                var iterator = followed.makeAsyncIterator()
                guard case .chunk(let piece)? = try await iterator.next(caughtUpAfter: .zero) else {
                    Issue.record("the bytes there are read first")
                    return
                }
                #expect(piece.chunk.bytes == Array("ab".utf8))
                guard case .caughtUp? = try await iterator.next(caughtUpAfter: .milliseconds(10)) else {
                    Issue.record("nothing to read is caught up")
                    return
                }
                FollowedFileTests.write("cd", to: log)
                guard case .chunk(let next)? = try await iterator.next(caughtUpAfter: .seconds(60)) else {
                    Issue.record("what was appended comes next")
                    return
                }
                #expect(next.chunk.bytes == Array("cd".utf8))
            }
        }
    }

    /// A copy of the log made by hand beside it (`app.log.bak`) is no rotation's: after a
    /// rename, only the files a rotation names are read.
    @Test func aFileNoRotationNamedIsNotRead() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            FollowedFileTests.write("abcdefgh", to: log)
            let (before, checkpoint) = try await Self.read(1, of: log)
            FollowedFileTests.write("abcdefgh", to: directory.appending("app.log.bak"))
            FollowedFileTests.write("x", to: directory.appending("app.log2"))
            FollowedFileTests.rename(log, directory.appending("app.log.1"))
            FollowedFileTests.write("new\n", to: log)
            let after = try await Self.resume(log, from: checkpoint)
            #expect(String(decoding: before + after.bytes, as: UTF8.self) == "abcdefghnew\n")
        }
    }

    /// A copytruncate's copy, read after a resume, is still named by the next checkpoint: when
    /// the log is then deleted and re-created while stopped, the copy is not read again.
    @Test func aCopyReadIsNotReadAgainAfterTheNextRotation() async throws {
        try await withScratchDirectory { directory in
            let log = directory.appending("app.log")
            FollowedFileTests.write("abcdefghij", to: log)
            let (before, first) = try await Self.read(2, of: log)
            FollowedFileTests.write("abcdefghij", to: directory.appending("app.log.1"))
            FollowedFileTests.write("new\n", to: log, appending: false)
            var second = first
            let middle = try await Self.resume(log, from: first, last: &second)
            _ = log.withCString { unlink($0) }
            FollowedFileTests.write("newer\n", to: log)
            let after = try await Self.resume(log, from: second)
            #expect(String(decoding: before + middle.bytes + after.bytes, as: UTF8.self) == "abcdefghijnew\nnewer\n")
        }
    }
}
