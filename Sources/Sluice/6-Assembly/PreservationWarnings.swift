/// The attributes a copy could not keep, one warning per kind for a whole run.
///
/// A destination that refuses an attribute (a file system without extended attributes,
/// `EPERM` for a `security.*` name without the privilege, an owner that only root may give)
/// usually refuses it for every file: one line per kind says it, not one per file.
///
/// Concurrency contract: a `Sendable` class; ``record(_:_:)`` may be called from any thread.
package final class PreservationWarnings: Sendable {
    private let recorded = LockedValue<[(kind: String, message: String)]>([])

    /// Creates an empty record.
    package init() {}

    /// Records that `kind` (such as `extended attributes (security.*)`) could not be kept,
    /// with the first error seen; later ones of that kind are counted as the same warning.
    package func record(_ kind: String, _ error: FileError) {
        recorded.withLock { list in
            guard !list.contains(where: { $0.kind == kind }) else { return }
            list.append((kind, "cannot preserve \(kind): \(error) (further refusals of this kind are not reported)"))
        }
    }

    /// One message per kind refused, in the order first seen.
    package var messages: [String] { recorded.withLock { $0.map(\.message) } }
}
