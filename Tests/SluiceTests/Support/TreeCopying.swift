@testable import Sluice

/// What a tree copy through a copier of its own did: its report, its failures' messages (in the
/// order reported), each regular file's outcome, and the copier's totals once finished.
struct CopiedTree {
    var report: Copier.TreeReport
    var failures: [String]
    var outcomes: [Copier.Outcome]
    var totals: Copier.Totals
}

/// Copies the tree `source` to `destination` as ``Copier/copyTree(from:to:options:onOutcome:onFailure:)``
/// does, through a copier of `options` whose system calls are `system` (the walk's, the
/// directories' and the files'), with a progress of its own whose totals grow while the walk
/// runs; then finishes the copier. `width: 1` copies one file at a time.
func copyTreeWithCopier(
    _ source: Pathname, to destination: Pathname, tree: Copier.TreeOptions = .init(), options: Copier.Options = .init(),
    system: SystemCalls = .live, beforeFinalPass: (@Sendable () -> Void)? = nil
) async throws -> CopiedTree {
    let copier = Copier(options: options, progress: ManyFilesProgress(isTotalGrowing: true), ownsProgress: true, system: system)
    let failures = LockedValue<[String]>([])
    let outcomes = LockedValue<[Copier.Outcome]>([])
    let report: Copier.TreeReport
    do {
        report = try await copier.copyTree(
            from: source, to: destination, options: tree, completesTotal: true,
            onOutcome: { outcome in outcomes.withLock { $0.append(outcome) } },
            onFailure: { error in failures.withLock { $0.append("\(error)") } }, beforeFinalPass: beforeFinalPass)
    } catch {
        _ = await copier.finish()
        throw error
    }
    let totals = await copier.finish()
    return CopiedTree(report: report, failures: failures.withLock { $0 }, outcomes: outcomes.withLock { $0 }, totals: totals)
}
