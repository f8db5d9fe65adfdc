import Foundation
import Sluice

/// Copies `sources` into `directory`, many at once within one byte budget, while a subscriber
/// prints the progress of them all at every quarter.
func copyManyFiles(_ sources: [String], into directory: String) async throws {
    // 1. Totals known in advance give a fraction from the start; without them the fraction
    //    comes once `finish()` has said that no more files come.
    let sizes = try sources.map { try FileManager.default.attributesOfItem(atPath: $0)[.size] as! Int }
    let copier = Copier(totalBytes: Int64(sizes.reduce(0, +)), totalFiles: sources.count)

    // 2. Subscribe before the first job, so that no snapshot is missed. Each snapshot is
    //    complete: a slow subscriber sees the newest one and never slows the copy.
    let updates = copier.progress.subscribe()
    let printer = Task {
        var lastQuarter = -1
        for await snapshot in updates {
            let quarter = Int((snapshot.fraction ?? 0) * 4)
            guard snapshot.isFinal || quarter != lastQuarter else { continue }
            lastQuarter = quarter
            let files = snapshot.files.map { "\($0.completed) of \($0.total) files" } ?? ""
            print("many files: \(quarter * 25)%, \(files), \(snapshot.bytesCompleted) bytes\(snapshot.isFinal ? ", done" : "")")
        }
    }

    // 3. Submit every job: `submit(_:)` suspends while the copier has as many files as it
    //    takes (backpressure, never an unbounded queue). Each job's completion runs on a
    //    copier's thread and must not block: it hands the outcome to a stream.
    let (outcomes, delivered) = AsyncStream.makeStream(of: Copier.Outcome.self)
    for source in sources {
        let destination = Pathname(directory).appending(Pathname(source).lastComponent)
        try await copier.submit(.init(from: .file(Pathname(source)), to: .file(destination), completion: { delivered.yield($0) }))
    }

    // 4. `finish()` waits for every file and syncs each directory renamed into once.
    let totals = await copier.finish()
    delivered.finish()
    await printer.value
    for await outcome in outcomes {
        if case .failure(let error) = outcome.result { print("many files: \(outcome.source): \(error)") }
    }
    print("many files: \(totals.committed) committed, \(totals.failed) failed, \(totals.bytesWritten) bytes")
    guard totals.failed == 0 else { throw CheckFailed(description: "\(totals.failed) files failed") }
    for source in sources { try expectSameFile(source, directory + "/" + (source as NSString).lastPathComponent) }
}
