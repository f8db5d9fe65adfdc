import Sluice

/// A type-erased ``ChunkSink``, so one pipeline type serves files, standard output and `--test`.
struct AnySink: ChunkSink {
    private let base: any ChunkSink
    init(_ base: any ChunkSink) { self.base = base }
    func write(_ chunk: Chunk) async throws { try await base.write(chunk) }
    func write(contentsOf chunks: [Chunk]) async throws { try await base.write(contentsOf: chunks) }
    var preferredExecutor: (any TaskExecutor)? { base.preferredExecutor }
    func commit() async throws { try await base.commit() }
    func abort() async { await base.abort() }
}
