import Sluice

/// A type-erased ``ChunkSink``, so one pipeline type serves files, standard output and `--test`.
/// It reads back only what its base can (a ``FileSink``); any other base answers `nil`.
struct AnySink: ReadBackSink {
    private let base: any ChunkSink
    init(_ base: any ChunkSink) { self.base = base }
    var destination: Pathname { (base as? any ReadBackSink)?.destination ?? "-" }
    func openForReadBack() async throws -> Descriptor? { try await (base as? any ReadBackSink)?.openForReadBack() }
    func write(_ chunk: Chunk) async throws { try await base.write(chunk) }
    func write(contentsOf chunks: [Chunk]) async throws { try await base.write(contentsOf: chunks) }
    var preferredExecutor: (any TaskExecutor)? { base.preferredExecutor }
    func commit() async throws { try await base.commit() }
    func abort() async { await base.abort() }
}
