/// A type-erased ``ChunkSink``, so one pipeline type serves files, descriptors and any sink
/// (a ``Copier`` job's ``Copier/Job/Destination``, the `sluice` command's standard output and
/// `--test`). It reads back only what its base can (a ``FileSink``); any other base answers
/// `nil`, and a copy that verifies is then committed unverified. It takes a transform's patch
/// only where its base does (a ``FileSink`` writing a temporary file).
///
/// Concurrency contract: its base's; every call is forwarded as it comes.
package struct AnyChunkSink: ReadBackSink, PatchableSink {
    private let base: any ChunkSink

    /// Wraps `base`.
    package init(_ base: any ChunkSink) { self.base = base }

    package var destination: Pathname { (base as? any ReadBackSink)?.destination ?? "-" }

    package func openForReadBack() async throws -> Descriptor? { try await (base as? any ReadBackSink)?.openForReadBack() }

    package func write(_ chunk: Chunk) async throws { try await base.write(chunk) }

    package func write(contentsOf chunks: [Chunk]) async throws { try await base.write(contentsOf: chunks) }

    package var preferredExecutor: (any TaskExecutor)? { base.preferredExecutor }

    package func commit() async throws { try await base.commit() }

    package func abort() async { await base.abort() }

    package var acceptsPatches: Bool {
        get async { await (base as? any PatchableSink)?.acceptsPatches ?? false }
    }

    package func apply(_ patch: OutputPatch) async throws { try await (base as? any PatchableSink)?.apply(patch) }
}

/// A type-erased sequence of ``Chunk``: a ``Copier`` job's chunk source
/// (``Copier/Job/Source/chunks(_:name:)``) as a pipeline's source type, whatever its error type.
///
/// Concurrency contract: as its base's; iterated once.
package struct AnyChunkSequence: AsyncSequence, Sendable {
    package typealias Element = Chunk

    private let makeIterator: @Sendable () -> Iterator

    /// Wraps `base`.
    package init<Base: AsyncSequence & Sendable>(_ base: Base) where Base.Element == Chunk {
        makeIterator = { Iterator(IteratorBox(base.makeAsyncIterator())) }
    }

    package func makeAsyncIterator() -> Iterator { makeIterator() }

    /// Pulls from the base's iterator.
    package struct Iterator: AsyncIteratorProtocol {
        private let box: any ChunkIteratorBox

        fileprivate init(_ box: any ChunkIteratorBox) { self.box = box }

        package mutating func next() async throws -> Chunk? { try await box.next() }
    }
}

/// The base iterator of an ``AnyChunkSequence``, held in a box so that its `next()` can mutate it.
private protocol ChunkIteratorBox: AnyObject {
    func next() async throws -> Chunk?
}

private final class IteratorBox<Base: AsyncIteratorProtocol>: ChunkIteratorBox where Base.Element == Chunk {
    private var base: Base

    init(_ base: Base) { self.base = base }

    func next() async throws -> Chunk? { try await base.next() }
}
