/// The methods a copy of one file tries, in order, and the one attempt loop over them for every
/// route that copies a file without a transform (`RegularFileCopy`, a file of ``Copier``
/// through the pipeline, and its file of one chunk copied in one step on its thread).
///
/// The plan follows from the options, the source and the destination alone, never from trying
/// (the table is `CopyMethod.chain(source:sourceFileSystem:destinationFileSystem:reflink:holes:kernelCopyLimit:verified:)`).
/// A route hands ``run(_:emptyingDestination:)`` how to copy by one method; the loop keeps each
/// refusal (``KernelCopyRefusal``: the kernel said "not here"), empties the destination and
/// rewinds the source before the next method, and throws anything else.
///
/// Immutable and `Sendable`; ``run(_:emptyingDestination:)`` runs in the calling task.
package struct CopyPlan: Sendable {
    /// The methods to try, in order; the last is the pipeline unless `--reflink=always`.
    package let chain: [CopyMethod]
    /// The destination's name, for the error of a plan whose methods were all refused.
    private let destination: Pathname
    /// The source's descriptor, rewound after a refusal; `nil` for the pipeline alone.
    private let source: (descriptor: Descriptor, path: Pathname, system: SystemCalls)?

    /// Plans the copy of `source` into `sink`.
    ///
    /// Without the file systems' types: the pipeline alone for a rate limit (only its reads can
    /// be paced), for a forced pipeline (`--pipeline`), for a source given as a descriptor
    /// (`descriptor` nil) or not regular, and for a destination written in place (a device, a
    /// FIFO). Else the table, by the two file systems' types (`fstatfs(2)` of `descriptor` and of
    /// the sink's temporary file), without `copy_file_range(2)` for a source whose hole map is
    /// not to be trusted (`distrustsHoleMap`: a clone needs none, the pipeline reads it all).
    ///
    /// Runs on the sink's thread (`fstatfs(2)` is a system call).
    ///
    /// - Throws: ``FileError``: `fstatfs` of either side (the source named `sourcePath`);
    ///   with ``Copier/ReflinkMode/always`` where no clone can be made (code
    ///   ``FileError/Code/unsupported``, operation ``FileError/Operation/clone``, the reason in
    ///   words), before anything is written.
    package static func make(
        options: RegularFileCopy.Options, source: FileStatus, descriptor: Descriptor?, sourcePath: Pathname,
        sourceSystem: SystemCalls, distrustsHoleMap: Bool, sink: isolated FileSink
    ) throws(FileError) -> CopyPlan {
        let destination = sink.destination
        func cannotClone(_ reason: String) -> FileError {
            FileError(code: .unsupported, operation: .clone, path: destination, reason: reason)
        }
        let pipelineAlone = CopyPlan(chain: [.pipeline], destination: destination, source: nil)
        if options.pipeline.rateLimit != nil {
            if options.reflink == .always { throw cannotClone("a clone cannot be paced: it has no rate limit") }
            return pipelineAlone
        }
        guard !options.forcesPipeline || options.reflink == .always, let descriptor, source.kind == .regular,
            sink.replacesDestination
        else {
            if options.reflink == .always { throw cannotClone("only a regular file opened by name can be cloned") }
            return pipelineAlone
        }
        if options.forcesPipeline { throw cannotClone("a clone has no pipeline: --reflink=always cannot be forced through one") }
        let sourceFileSystem: FileSystemType
        do { sourceFileSystem = try descriptor.fileSystemType(system: sourceSystem) } catch {
            throw FileError.fstatfs(path: sourcePath, errno: error)
        }
        guard let destinationFileSystem = try sink.fileSystemType() else { return pipelineAlone }
        var chain = CopyMethod.chain(
            source: source, sourceFileSystem: sourceFileSystem, destinationFileSystem: destinationFileSystem,
            reflink: options.reflink, holes: options.holes, kernelCopyLimit: options.kernelCopyLimit,
            verified: options.pipeline.verifiesOutput)
        if distrustsHoleMap { chain.removeAll { $0 == .kernelCopy } }
        if chain.isEmpty {
            throw cannotClone(
                options.holes != .auto
                    ? "a clone keeps the source's holes and zeros as they are (--sparse=auto only)"
                    : sourceFileSystem == destinationFileSystem
                        ? "\(destinationFileSystem) cannot clone"
                        : "the source (\(sourceFileSystem)) and the destination (\(destinationFileSystem)) are on different file systems")
        }
        return CopyPlan(chain: chain, destination: destination, source: (descriptor, sourcePath, sourceSystem))
    }

    /// Tries the methods in order until one copies: `attempt` copies by a method to the end (a
    /// commit or a seal); after a refusal (``KernelCopyRefusal``), kept, `emptyDestination`
    /// empties the destination (`FileSink.discardContents()`), the source is rewound, and the
    /// next method is tried. Runs where the caller runs: a synchronous `attempt` never suspends.
    ///
    /// - Returns: what the attempt that copied returned, its method, and the methods refused
    ///   before it, in order.
    /// - Throws: the first error of `attempt` that is not a refusal, or of `emptyDestination`;
    ///   ``FileError`` (operation `lseek`) of the rewind; when every method was refused (only
    ///   ``Copier/ReflinkMode/always`` has no pipeline at its end): code
    ///   ``FileError/Code/unsupported``, operation ``FileError/Operation/clone``, the last
    ///   refusal's errno.
    package func run<Copy>(
        _ attempt: (CopyMethod) async throws -> Copy, emptyingDestination emptyDestination: () async throws -> Void
    ) async throws -> (copy: Copy, method: CopyMethod, refusals: [CopyMethod.Refusal]) {
        var refusals: [CopyMethod.Refusal] = []
        for method in chain {
            do { return (try await attempt(method), method, refusals) } catch let refusal as KernelCopyRefusal {
                refusals.append(CopyMethod.Refusal(method: refusal.method == .clone ? .clone : .kernelCopy, errno: refusal.errno))
                try await emptyDestination()
                if let source {
                    do { try source.descriptor.seek(to: 0, system: source.system) } catch {
                        throw FileError.lseek(path: source.path, errno: error)
                    }
                }
            }
        }
        throw FileError(code: .unsupported, operation: .clone, path: destination, errno: refusals.last?.errno)
    }
}
