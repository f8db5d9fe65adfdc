#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Sluice
import SluiceTestSupport

/// A copier's file whose destination is a FIFO that no reader opens: a file of one chunk, which
/// the copier would copy in one step on its thread, takes the general path, whose wait for the
/// reader ends by cancellation.
@Suite(.timeLimit(.minutes(3)))
struct CopierFIFODestinationTests {
    /// Cancelled once the writer's `open(2)` has been called (the seam says when), the copy
    /// throws `CancellationError`, with every descriptor opened on the FIFO closed again and
    /// nothing made beside it.
    @Test func cancellingACopyOfASmallFileToAFIFOWithNoReaderEndsIt() async throws {
        try await withScratchDirectory { directory in
            let source = directory.appending("source")
            try writeFile(source, [1, 2, 3])
            let fifo = directory.appending("fifo")
            #expect(mkfifo(fifo.description, 0o600) == 0)
            let opens = FIFOOpens(fifo)
            let copier = Copier(options: .init(), progress: ManyFilesProgress(), ownsProgress: true, system: opens.system)
            let status = try FileStatus.of(source)
            let copy = Task { try await copier.copy(.init(source: source, destination: fifo, sourceStatus: status)) }
            await opens.writerOpening.wait()
            copy.cancel()
            await #expect(throws: CancellationError.self) { _ = try await copy.value }
            _ = await copier.finish()
            let left = try entries(in: directory.path)
            #expect(opens.openDescriptors == [])
            #expect(left == ["fifo", "source"])
        }
    }
}
