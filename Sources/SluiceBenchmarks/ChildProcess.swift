#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Sluice

/// Runs a program as a child process and measures it with `wait4(2)` on that child alone.
///
/// CPU time is the child's user and system time from that `wait4`'s `rusage` (with the children
/// it waited for itself, as `getrusage(RUSAGE_BOTH)` counts them: a shell's command included).
/// Peak RSS comes from that child's `ru_maxrss` (the kernel's high-water mark), not from
/// `getrusage(RUSAGE_CHILDREN)`, which reports the largest child ever reaped by this process.
/// One Linux quirk remains: `posix_spawn` starts the child on this process's memory
/// (`CLONE_VM | CLONE_VFORK`) and `execve(2)` records that memory's high-water mark in the child's
/// `ru_maxrss`, so a child never reports less than this process's own peak. A child that can
/// report its own `VmHWM` (as `sluice bench-run` does) is the better measure of itself.
/// Standard output and standard error go to files, so nothing can fill a pipe and stall.
public enum ChildProcess {
    /// What a child did.
    public struct Result: Sendable {
        /// The exit status (128 + signal number if it was killed by a signal).
        public var status: Int32
        /// Its standard output.
        public var standardOutput: String
        /// Its standard error.
        public var standardError: String
        /// Its peak resident set size in bytes (`ru_maxrss` × 1024): at least the spawning
        /// process's own peak (see above).
        public var peakResidentBytes: Int64
        /// Wall-clock seconds from spawn to exit.
        public var seconds: Double
        /// CPU seconds the child used, user and system (`ru_utime` + `ru_stime`, microsecond
        /// resolution).
        public var cpuSeconds: Double
    }

    /// Spawns `executable` with `arguments` (`posix_spawn(3)`), waits for it with `wait4(2)` on a
    /// dedicated thread (never on the cooperative pool) and returns what it did.
    ///
    /// - Throws: ``FileError`` if the program cannot be started.
    public static func run(_ executable: String, _ arguments: [String], scratch: Pathname) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            DedicatedThread.start(name: "sluice.child") {
                continuation.resume(with: Swift.Result { try runBlocking(executable, arguments, scratch: scratch) })
            }
        }
    }

    static func runBlocking(_ executable: String, _ arguments: [String], scratch: Pathname) throws -> Result {
        let outPath = scratch.appending(Pathname("child-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).out"))
        let errPath = Pathname(bytes: outPath.bytes + Array(".err".utf8))
        defer {
            _ = outPath.withCString { unlink($0) }
            _ = errPath.withCString { unlink($0) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        _ = outPath.withCString { posix_spawn_file_actions_addopen(&actions, 1, $0, O_WRONLY | O_CREAT | O_TRUNC, 0o600) }
        _ = errPath.withCString { posix_spawn_file_actions_addopen(&actions, 2, $0, O_WRONLY | O_CREAT | O_TRUNC, 0o600) }
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        // The child starts with no blocked signals and default dispositions, whatever this
        // process blocks (sluice blocks the signals its commit gate takes).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptySet = sigset_t()
        sigemptyset(&emptySet)
        // Signals this process was started with ignored (`nohup`) stay ignored in the child;
        // SIGPIPE, which sluice ignores for itself, is reset.
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        for number in 1..<Int32(NSIG) where number != SIGPIPE {
            var current = sigaction()
            if sigaction(number, nil, &current) == 0,
                unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) {
                sigdelset(&allSignals, number)
            }
        }
        posix_spawnattr_setsigmask(&attributes, &emptySet)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let start = ContinuousClock.now
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard spawned == 0 else {
            throw FileError.posixSpawn(path: Pathname(executable), errno: ErrorNumber(rawValue: spawned))
        }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw FileError.wait4(path: Pathname(executable), errno: ErrorNumber(rawValue: errno)) }
        }
        let elapsed = ContinuousClock.now - start
        let exitStatus: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Result(
            status: exitStatus, standardOutput: try readAll(outPath), standardError: try readAll(errPath),
            peakResidentBytes: Int64(usage.ru_maxrss) * 1024,
            seconds: elapsed.benchmarkSeconds, cpuSeconds: usage.cpuSeconds)
    }

    static func readAll(_ path: Pathname) throws -> String {
        let descriptor = try Descriptor.open(path, O_RDONLY)
        defer { try? descriptor.close() }
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = try buffer.withUnsafeMutableBytes { (raw) throws(ErrorNumber) -> Int in try descriptor.read(into: raw) }
            if count == 0 { break }
            data += buffer[..<count]
        }
        return String(decoding: data, as: UTF8.self)
    }
}

extension rusage {
    /// User and system CPU time, in seconds.
    var cpuSeconds: Double {
        Double(ru_utime.tv_sec) + Double(ru_utime.tv_usec) / 1e6 + Double(ru_stime.tv_sec) + Double(ru_stime.tv_usec) / 1e6
    }
}
