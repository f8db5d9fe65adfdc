/// A condition that a pipeline stage met and that did not fail it, but that its user should
/// hear about.
///
/// A transform reports its warnings in its ``TransformSummary`` (a gzip decoder: trailing bytes
/// after the last member); a sink may keep its own (a file sink: a directory that could not be
/// synced once the data was in place); a copy's report carries the transform's. The `sluice`
/// command prints each on standard error and exits with status 2.
public struct StageWarning: Sendable, Hashable, CustomStringConvertible {
    /// A one-line, human-readable description without a program prefix.
    package var message: String

    /// Creates a warning with a one-line message.
    public init(_ message: String) {
        self.message = message
    }

    /// The `message`.
    public var description: String { message }

    /// A source that changed while it was read: `changes` says what (`FileStatus.changes(to:)`).
    /// The copy is what was read; the file holds something else now.
    package static func sourceChanged(_ changes: String) -> StageWarning {
        StageWarning("file changed as we read it (\(changes))")
    }
}
