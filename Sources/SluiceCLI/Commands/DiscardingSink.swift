import Sluice

/// A sink that drops every chunk: `--test` decodes and verifies without writing.
struct DiscardingSink: ChunkSink {
    func write(_ chunk: Chunk) async throws {}
    func commit() async throws {}
    func abort() async {}
}
