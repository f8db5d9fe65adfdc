import Sluice

/// The designs `sluice bench` compares, each moving the same file to a file.
public enum BenchmarkDesign: String, CaseIterable, Sendable, Codable {
    /// A producer task reads chunks as fast as it can and yields them into an `AsyncStream` with
    /// default (unbounded) buffering; a consumer task writes them.
    case unboundedStream = "unbounded-stream"
    /// The Sluice pipeline, user-space path: ``FileChunks`` → ``BoundedChannel`` → sink.
    case boundedPull = "bounded-pull"
    /// A producer thread that cannot pause, into a ``PushBuffer`` with the `.fail` policy: with a
    /// slow consumer it must end with ``CapacityExceededError``.
    case pushFail = "push-fail"
    /// The same producer into a ``PushBuffer`` that spills to disk: it must deliver everything.
    case pushSpill = "push-spill"
}
