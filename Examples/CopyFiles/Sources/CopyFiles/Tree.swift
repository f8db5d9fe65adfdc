import Foundation
import Sluice

/// Copies the directory `tree` into `directory` as `cp -a` does: directories, regular files,
/// symbolic links and hard links, with their modes and times.
func copyDirectoryTree(_ tree: String, into directory: String) async throws {
    // 1. How every entry is written is the copier's sink options: here, keep the attributes.
    var options = Copier.Options()
    options.sink.preservesAttributes = true
    let copier = Copier(options: options)

    // 2. `copyTree` puts the copy where `cp -R` would: inside an existing directory, under the
    //    tree's name. Its files go through the copier beside any others; an entry that fails
    //    is reported and the copy goes on.
    let report = try await copier.copyTree(
        from: Pathname(tree), to: Pathname(directory), options: .init(keepsHardLinks: true),
        onFailure: { error in print("tree: \(error)") })

    // 3. As for every file of the copier, `finish()` makes the tree's files durable.
    let totals = await copier.finish()
    print("tree: \(report.files) files, \(report.directories) directories, \(report.symbolicLinks) symbolic links, "
        + "\(report.hardLinks) hard links, \(report.bytes) bytes, \(report.failures) failures")
    guard report.failures == 0, totals.unsyncedDirectories.isEmpty else { throw CheckFailed(description: "the tree's copy failed") }
    try expectSameTree(tree, directory + "/" + (tree as NSString).lastPathComponent)
}
