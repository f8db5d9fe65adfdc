import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The processors the process may run on: how many threads of CPU work can make progress at
/// once.
///
/// Not the machine's count of processors: a container, `taskset(1)` or a cgroup's `cpuset` can
/// confine the process to fewer, and more threads than those only take turns. The count is
/// that of the calling thread's affinity mask (`sched_getaffinity(2)`), as `nproc(1)` prints it.
///
/// Concurrency: stateless; callable from any thread.
package enum ProcessorAffinity {
    /// The count of processors the calling thread may run on (>= 1).
    ///
    /// Read from `sched_getaffinity(2)` at each call, so it follows a mask changed since.
    /// When the mask cannot be read (a machine with more than 1,024 processors, where the
    /// fixed-size `cpu_set_t` is too small), the count of online processors
    /// (`sysconf(_SC_NPROCESSORS_ONLN)`).
    package static func availableProcessorCount() -> Int {
        var set = cpu_set_t()
        if sched_getaffinity(0, MemoryLayout<cpu_set_t>.size, &set) == 0 {
            let count = withUnsafeBytes(of: &set) { bytes in bytes.reduce(0) { $0 + $1.nonzeroBitCount } }
            if count > 0 { return count }
        }
        return max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }
}
