import Sluice

/// Copies one file: by a clone where the file system shares extents, else by
/// `copy_file_range(2)`, else through the pipeline; to a temporary file beside `destination`,
/// renamed over it once complete and synced.
func copyOneFile(_ source: String, to destination: String) async throws {
    // 1. A copier with the default options: durable, never replacing a file, many files at once
    //    within a 32 MiB budget. One file is a job like any other.
    let copier = Copier()

    // 2. `copy(_:)` returns once the file is renamed into place, or throws what stopped it
    //    (nothing of a failed copy is left behind).
    let committed = try await copier.copy(.init(from: .file(Pathname(source)), to: .file(Pathname(destination))))

    // 3. `finish()` syncs the directory the file was renamed into: the copy is durable now.
    let totals = await copier.finish()
    print("one file: \(committed.report.bytesWritten) bytes by \(committed.report.method), \(totals.committed) committed")
    try expectSameFile(source, destination)
}
