#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The descriptors a copy of many files may hold open, shared out of the process's limit on
/// open files (`RLIMIT_NOFILE`, `ulimit -n`) among everything that holds them: the directory
/// stacks of a tree's walk (each side), the files in flight (a source and a temporary file
/// each, and the directories their names are in), the durable files sealed and waiting for their
/// batch's `syncfs(2)`, and the directories waiting for their `fsync(2)`.
///
/// Read once per process (``current``): the limit, less the descriptors open then (standard
/// input, output and error, the signal descriptor) and ``runtimeReserve`` for the runtime's own
/// (libdispatch opens an `epoll`, an `eventfd` and `timerfd`s the first time a timer is set, and
/// traps, or silently never fires, when it cannot). What is left, ``available``, is shared out
/// so that a copy at any limit of at least ``minimumForTree`` more than that completes:
///
/// | share | of `available` | bounds |
/// |---|---|---|
/// | ``directoriesPerSide`` | 1/8 | 2 to 32 |
/// | ``directoriesToSync`` | 1/16 | 1 to 64 |
/// | ``filesInFlight`` | the rest, ``perFileInFlight`` (6) per durable file | 1 to 64 |
/// | ``filesInFlightWithoutSync`` | what the walk leaves, 6 per file | 1 to 64 |
/// | ``sealedFiles`` | 1/4, held open | 0 (closed, named) below 8, to 1,024 |
///
/// The walk itself holds ``heldByWalk``: its two stacks, both parents and one descriptor for a
/// moment. Where not even one file fits beside it (``copiesOneFileAtATime``, as at `ulimit -n`
/// 16 from a terminal), the walk opens a directory only once no file holds descriptors, so each
/// file's directories are the walk's own: one file in flight then needs only its source and
/// its temporary file.
///
/// At the usual limit of 1,024 (with a few descriptors open) none of them binds: 32 directories
/// a side, 63 to sync, every file the engine's width allows, 254 sealed files.
///
/// Concurrency contract: an immutable `Sendable` value.
package struct DescriptorBudget: Sendable, Hashable {
    /// The limit on open files (`RLIMIT_NOFILE`'s soft limit), at most 1,048,576.
    package let limit: Int
    /// The descriptors not shared out: those open when the budget was read, and
    /// ``runtimeReserve``.
    package let reserved: Int

    /// The descriptors kept for the runtime's own, opened lazily: libdispatch's `epoll`,
    /// `eventfd` and two `timerfd`s.
    package static let runtimeReserve = 4

    /// The fewest descriptors a tree copy needs beyond ``reserved``: two directories on each
    /// side's stack, the source root's parent, the destination's parent, and one file in
    /// flight (its source and its temporary file; the walk waits for it before it opens a
    /// directory, ``copiesOneFileAtATime``). A limit that leaves fewer is refused at the
    /// start (`sluice copy -r` exits 1 with a message); from a terminal, with standard input,
    /// output and error and the signal descriptor open, that is `ulimit -n` 16.
    package static let minimumForTree = 8

    /// A budget of `limit` descriptors of which `inUse` are open now.
    package init(limit: Int, inUse: Int) {
        self.limit = limit
        self.reserved = inUse + Self.runtimeReserve
    }

    /// The process's budget, read the first time it is used (`getrlimit(2)`, and the entries
    /// of `/proc/self/fd`): call it before opening descriptors of one's own that the copy
    /// should not count on.
    package static let current = DescriptorBudget.measured()

    /// The budget the process has now.
    static func measured() -> DescriptorBudget {
        var value = rlimit()
        let limit = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &value) == 0 ? Int(min(value.rlim_cur, 1 << 20)) : 1024
        return DescriptorBudget(limit: limit, inUse: openDescriptorCount(below: limit))
    }

    /// The descriptors open now below `limit`: the entries of `/proc/self/fd` (proc(5)), less
    /// the one that reads them, in a few `getdents64(2)` calls; without `/proc`, those
    /// `fcntl(F_GETFD)` finds among the first 65,536 (one call each: 20 ms at a limit of 20,000).
    static func openDescriptorCount(below limit: Int, listedIn listing: String = "/proc/self/fd") -> Int {
        if let directory = opendir(listing) {
            defer { closedir(directory) }
            let own = dirfd(directory)
            var count = 0
            while let entry = readdir(directory) {
                let number = withUnsafeBytes(of: entry.pointee.d_name) { name in
                    Int(String(decoding: name.prefix { $0 != 0 }, as: UTF8.self))
                }
                if let number, number != Int(own), number < limit { count += 1 }
            }
            return count
        }
        return probedDescriptorCount(below: limit)
    }

    /// The descriptors `fcntl(F_GETFD)` finds open among the first `limit` (at most 65,536).
    static func probedDescriptorCount(below limit: Int) -> Int {
        (0..<CInt(min(limit, 1 << 16))).count { fcntl($0, F_GETFD) != -1 }
    }

    /// The descriptors shared out: ``limit`` less ``reserved`` (0 when none are left).
    package var available: Int { max(0, limit - reserved) }

    /// Whether a tree copy can run: ``available`` is at least ``minimumForTree``.
    package var allowsTreeCopy: Bool { available >= Self.minimumForTree }

    /// The directory descriptors each side of a tree's walk keeps open
    /// (`Copier.TreeOptions.maximumOpenDirectories`): an eighth, 2 to 32.
    package var directoriesPerSide: Int { Self.clamp(available / 8, 2, 32) }

    /// The directories held open while they wait for their `fsync(2)` (`DirectorySyncBatch`)
    /// or hold sealed files: a sixteenth, 1 to 64.
    package var directoriesToSync: Int { Self.clamp(available / 16, 1, 64) }

    /// What a tree's walk holds whatever the files do: ``directoriesPerSide`` on each side, the
    /// source root's parent and the destination's parent, and one more for a moment (a
    /// directory's listing, a parent reopened through `..`).
    package var heldByWalk: Int { 2 * directoriesPerSide + 3 }

    /// The descriptors one file may hold, worst case: its source and its temporary file, the
    /// two directories its names are in (the walk may have moved on and closed its own), and
    /// the two directories of the file handed over after it, waiting to start.
    package static let perFileInFlight = 6

    /// The most files in flight at once: what the walk, the directories to sync and the
    /// sealed files leave, ``perFileInFlight`` per file, 1 to 64.
    package var filesInFlight: Int {
        Self.clamp((available - heldByWalk - directoriesToSync - sealedFiles) / Self.perFileInFlight, 1, 64)
    }

    /// The most files in flight at once that are not made durable (`--no-fsync`), which hold
    /// no sealed file nor directory to sync: what the walk leaves, ``perFileInFlight`` per
    /// file, 1 to 64; at least ``filesInFlight``.
    package var filesInFlightWithoutSync: Int {
        max(filesInFlight, Self.clamp((available - heldByWalk) / Self.perFileInFlight, 1, 64))
    }

    /// The most jobs handed over to an engine of `width` files in flight that wait to start:
    /// one per file (counted in ``perFileInFlight``), and, from the share of the files the
    /// engine leaves out of ``filesInFlight``, three more per file left (two directories each),
    /// up to ``maximumJobsWaiting`` in all. A file that ends takes the next at once, and a
    /// walk that hands them over is woken once per half of them.
    package func jobsWaiting(besideFilesInFlight width: Int) -> Int {
        max(width, min(Self.maximumJobsWaiting, width + 3 * max(0, filesInFlight - width)))
    }

    /// The most jobs waiting to start that ``jobsWaiting(besideFilesInFlight:)`` allows beyond
    /// one per file: 16 (the tree of `benchmarks/tree-copy.sh`, 2,000 files, with 8 files in
    /// flight: 1,100 thread switches instead of 1,700 with 8 waiting).
    package static let maximumJobsWaiting = 16

    /// Whether even one file in flight does not fit beside the walk (below `ulimit -n` 22 or
    /// so from a terminal): then a tree's walk hands over one file and waits until the file has
    /// released its descriptors before it goes on, so the file's directories are the walk's
    /// own and no other file waits to start. Slower (nothing overlaps), never short.
    package var copiesOneFileAtATime: Bool {
        available - heldByWalk - directoriesToSync - sealedFiles < Self.perFileInFlight
    }

    /// The most sealed durable files that wait for their batch's `syncfs(2)` with their
    /// descriptors open: a quarter, at most ``maximumSealedFiles``; 0 where that would be fewer than 8 (below
    /// `ulimit -n` 48 or so), and then a sealed file is a named temporary file
    /// (`.sluice-<random>.tmp`), closed while it waits and reopened, one at a time, for the
    /// check of its write-back, so that a batch holds no descriptor per file. (Where even that
    /// one descriptor cannot be had, the batch's `syncfs(2)` decides for the file.)
    package var sealedFiles: Int {
        let quarter = min(Self.maximumSealedFiles, available / 4)
        return quarter < 8 ? 0 : quarter
    }

    /// The most sealed files, whatever the limit: 1,024, so a batch holds up to 512 files
    /// (``sealedFiles`` halved) where the limit allows it (`ulimit -n` of about 4,100 or more). Fewer
    /// batches, fewer `syncfs(2)`: the 2,000 files of `benchmarks/tree-copy.sh` are made durable
    /// with 8 (17 with at most 256, when a batch waited 50 ms; 7 with 2,048). Each file waiting
    /// keeps about 700 bytes of records in the `sluice` command: with 2,048 a durable copy of
    /// 5,000 files peaked 0.6 MiB higher (18.6 MiB against 17.9, 5 alternating runs), in the
    /// same time, and the tree's durable copy took the same time (0.83x and 0.85x `cp -a` then
    /// `sync` against 0.85x and 0.83x, 5 rounds each, a journaled loop ext4 image).
    package static let maximumSealedFiles = 1024

    /// Runs `open` again each time it fails for want of descriptors (`EMFILE`, `ENFILE`) and
    /// `release` (which frees descriptors its caller holds, and waits until it has) says some
    /// were released; the error once none are.
    static func retrying<Value, Failure: Error>(
        whileReleasing release: () -> Bool, _ open: () throws(Failure) -> Value
    ) throws(Failure) -> Value {
        while true {
            do {
                return try open()
            } catch {
                guard (error as? FileError)?.isDescriptorExhaustion == true, release() else { throw error }
            }
        }
    }

    /// The same, for an `open` that suspends (it still runs on its caller's thread, as
    /// `release` blocks it).
    static func retrying<Value>(whileReleasing release: () -> Bool, _ open: () async throws -> Value) async throws -> Value {
        while true {
            do {
                return try await open()
            } catch let error as FileError where error.isDescriptorExhaustion {
                guard release() else { throw error }
            }
        }
    }

    private static func clamp(_ value: Int, _ low: Int, _ high: Int) -> Int {
        min(high, max(low, value))
    }
}
