import Foundation
import Sluice

/// Starts a copy held to 4 MiB/s, cancels it once its first bytes are written, and checks that
/// nothing of it is left: no destination, no temporary file.
func copyAndCancel(_ source: String, to destination: String) async throws {
    // 1. A rate limit (`--limit-rate`) takes the pipeline and slows it, so the copy is still
    //    running when it is cancelled.
    var options = Copier.Options()
    options.rateLimit = RateLimiter(bytesPerSecond: 4 << 20)
    let copier = Copier(options: options)
    let before = try FileManager.default.contentsOfDirectory(atPath: (destination as NSString).deletingLastPathComponent)

    // 2. Cancelling the task that waits in `copy(_:)` cancels the copier (as `cancel()` does,
    //    from anywhere): the file is aborted before its commit point.
    let updates = copier.progress.subscribe()
    let copying = Task { try await copier.copy(.init(from: .file(Pathname(source)), to: .file(Pathname(destination)))) }
    for await snapshot in updates where snapshot.bytesCompleted > 0 {
        print("cancel: \(snapshot.bytesCompleted) bytes copied, cancelling")
        copying.cancel()
        break
    }

    // 3. The copy throws `CancellationError`; `finish()` still returns the totals.
    let result = await copying.result
    let totals = await copier.finish()
    guard case .failure(is CancellationError) = result else { throw CheckFailed(description: "the copy was not cancelled: \(result)") }
    let after = try FileManager.default.contentsOfDirectory(atPath: (destination as NSString).deletingLastPathComponent)
    guard Set(after) == Set(before) else {
        throw CheckFailed(description: "the cancelled copy left \(Set(after).subtracting(before).sorted())")
    }
    print("cancel: CancellationError, nothing left; \(totals.committed) committed, \(totals.failed) failed")
}
