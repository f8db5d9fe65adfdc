import CSluiceShims

/// The arenas of glibc's `malloc`: the pools threads allocate from, up to 8 per processor by
/// default, each keeping the memory its threads freed for their next allocations.
///
/// A process whose threads mostly wait for the kernel (the `sluice` command's file threads, its
/// sync batch, its command thread) gains nothing from more arenas than processors, and each
/// holds freed memory of its own: a durable `sluice copy` of 5,000 files peaked at 18.7 MiB
/// with glibc's default and 17.8 MiB with 2 arenas on 2 processors, in the same time (5 runs
/// each, `benchmarks/many-files.sh`).
///
/// Concurrency: call before the process starts its threads (`mallopt(3)` changes a setting of
/// the whole process).
package enum MallocArenas {
    /// Limits `malloc` to `count` arenas (`mallopt(3)`, `M_ARENA_MAX`); a no-op where the C
    /// library is not glibc.
    ///
    /// - Returns: whether the limit was set.
    @discardableResult
    package static func limit(to count: Int) -> Bool {
        #if canImport(Glibc)
        return mallopt(CSluiceShims_M_ARENA_MAX, Int32(clamping: max(1, count))) == 1
        #else
        return false
        #endif
    }
}
