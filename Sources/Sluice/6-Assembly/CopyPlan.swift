/// The methods a copy of one file tries, in order, and what each attempt came to: the one
/// planner and the one attempt loop's bookkeeping for every route that copies a file without a
/// transform (`RegularFileCopy`, a file of ``Copier`` through the pipeline, and its file of
/// one chunk copied in one step on its thread).
///
/// The plan follows from the options, the source and the destination alone, never from trying
/// (the table is `CopyMethod.chain(source:sourceFileSystem:destinationFileSystem:reflink:holes:kernelCopyLimit:verified:)`).
/// A route walks it with ``nextMethod()`` and hands every failure to ``record(_:)``, which keeps a
/// refusal (``KernelCopyRefusal``: the kernel said "not here") and rethrows anything else:
///
/// ```swift
/// while let method = plan.nextMethod() {
///     do { return try attempt(method) } catch { try plan.record(error) }  // a refusal: the next
/// }
/// throw plan.exhausted()
/// ```
///
/// A value type, used by one task at a time.
package struct CopyPlan: Sendable {
    /// The methods to try, in order; the last is the pipeline unless `--reflink=always`.
    package let chain: [CopyMethod]
    /// The methods tried so far that the kernel refused, in order.
    package private(set) var refusals: [CopyMethod.Refusal] = []
    /// The destination's name, for the error of a plan whose methods were all refused.
    private let destination: Pathname
    private var nextIndex = 0

    /// A plan of these methods, for a copy to `destination`.
    package init(chain: [CopyMethod], destination: Pathname) {
        self.chain = chain
        self.destination = destination
    }

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
        let pipelineAlone = CopyPlan(chain: [.pipeline], destination: destination)
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
        return CopyPlan(chain: chain, destination: destination)
    }

    /// The method to try next; `nil` once every method of the chain was tried.
    package mutating func nextMethod() -> CopyMethod? {
        guard nextIndex < chain.count else { return nil }
        defer { nextIndex += 1 }
        return chain[nextIndex]
    }

    /// Takes the failure of the method last returned by ``nextMethod()``: a refusal
    /// (``KernelCopyRefusal``) is kept, and the caller tries the next method once it has
    /// emptied the destination and rewound the source; anything else is rethrown.
    ///
    /// - Throws: `error` when it is not a refusal.
    package mutating func record(_ error: any Error) throws {
        guard let refusal = error as? KernelCopyRefusal else { throw error }
        refusals.append(CopyMethod.Refusal(method: refusal.method == .clone ? .clone : .kernelCopy, errno: refusal.errno))
    }

    /// The error of a plan whose every method the kernel refused (only ``Copier/ReflinkMode/always``
    /// has no pipeline at its end): code ``FileError/Code/unsupported``, operation
    /// ``FileError/Operation/clone``, the last refusal's errno.
    package func exhausted() -> FileError {
        FileError(code: .unsupported, operation: .clone, path: destination, errno: refusals.last?.errno)
    }
}
