#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Testing

/// What a finished `sluice` (or shell) run left behind.
struct CLIResult: Sendable {
    /// The exit status, or 128 + the signal number when a signal ended the process (as a shell
    /// reports it).
    var status: Int32
    /// The signal that ended the process, if one did.
    var signal: Int32?
    var stdout: [UInt8]
    var stderr: String
    /// From the spawn to the end of `waitpid(2)`.
    var elapsed: Duration
    /// When `waitpid(2)` returned, read on the waiting thread: timing a signal by this, not by
    /// when the awaiting test resumed, keeps a busy cooperative pool out of the measure.
    var exited: ContinuousClock.Instant

    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
}

/// Where a child's standard input comes from, or its standard output or error goes.
enum Stream: Sendable {
    /// `/dev/null`.
    case null
    /// A file, by absolute path (opened in the child: read for input, created or truncated for
    /// output).
    case file(String)
    /// A descriptor of the test process, duplicated onto the child's (the test keeps its own).
    case descriptor(Int32)
}

/// Runs the built `sluice` binary, or `/bin/sh -c`, with arguments as bytes through
/// `posix_spawn(3)`, so a file name that is not UTF-8 reaches the child unchanged.
///
/// Standard output and error go to files in the sandbox (or to a pipe the test reads), so a
/// chatty child can never block on a full pipe while the test waits for it. Every blocking call
/// (`waitpid`, `read`) runs on a thread of its own, not on Swift's cooperative pool.
enum CLI {
    /// The `sluice` binary next to the running test bundle.
    static let binary: String = locateBinary()

    /// Runs `sluice` with `arguments` in `sandbox` and waits for it.
    static func run(
        _ arguments: [String], in sandbox: Sandbox, stdin: Stream = .null
    ) async throws -> CLIResult {
        try await run(bytes: arguments.map { Array($0.utf8) }, in: sandbox, stdin: stdin)
    }

    /// Runs `sluice` with `arguments` given as bytes.
    static func run(
        bytes arguments: [[UInt8]], in sandbox: Sandbox, stdin: Stream = .null
    ) async throws -> CLIResult {
        let process = try start(bytes: arguments, in: sandbox, stdin: stdin)
        return await process.finish()
    }

    /// Runs `script` with `/bin/sh -c` in `sandbox`; `$SLUICE` is the binary's path.
    static func shell(_ script: String, in sandbox: Sandbox) async throws -> CLIResult {
        let process = try start(
            program: "/bin/sh", bytes: [Array("-c".utf8), Array(script.utf8)], in: sandbox, stdin: .null,
            stdout: .file(sandbox.path(".stdout-\(UUID().uuidString)")),
            stderr: .file(sandbox.path(".stderr-\(UUID().uuidString)")),
            environment: ["SLUICE=\(binary)"])
        return await process.finish()
    }

    /// Starts `sluice` without waiting: standard output goes to a file unless `stdout` is given,
    /// standard error to a file, to `stderr` if given (a pseudo-terminal), or to a pipe the test
    /// reads line by line (``RunningProcess/nextErrorLine()``).
    static func start(
        _ arguments: [String], in sandbox: Sandbox, stdin: Stream = .null, stdout: Stream? = nil,
        stderr: Stream? = nil, errorPipe: Bool = false
    ) throws -> RunningProcess {
        try start(
            bytes: arguments.map { Array($0.utf8) }, in: sandbox, stdin: stdin, stdout: stdout, stderr: stderr,
            errorPipe: errorPipe)
    }

    /// Starts `program` with `arguments` (`$SLUICE` in them is the binary's path), as ``start(_:in:stdin:stdout:stderr:errorPipe:)``
    /// does `sluice`: a tracer such as `strace` or `setpriv` that runs `sluice` itself.
    static func start(
        program: String, _ arguments: [String], in sandbox: Sandbox, stdin: Stream = .null, errorPipe: Bool = false
    ) throws -> RunningProcess {
        let expanded = arguments.map { $0 == "$SLUICE" ? binary : $0 }
        return try start(bytes: expanded.map { Array($0.utf8) }, in: sandbox, stdin: stdin, errorPipe: errorPipe, program: program)
    }

    static func start(
        bytes arguments: [[UInt8]], in sandbox: Sandbox, stdin: Stream = .null, stdout: Stream? = nil,
        stderr: Stream? = nil, errorPipe: Bool = false, program: String = binary
    ) throws -> RunningProcess {
        let outputName = sandbox.path(".stdout-\(UUID().uuidString)")
        let errorName = sandbox.path(".stderr-\(UUID().uuidString)")
        if let stderr {
            return try start(
                program: program, bytes: arguments, in: sandbox, stdin: stdin, stdout: stdout ?? .file(outputName),
                stderr: stderr)
        }
        if errorPipe {
            let pipe = try Pipe.make()
            defer { pipe.closeWriteEnd() }
            return try start(
                program: program, bytes: arguments, in: sandbox, stdin: stdin,
                stdout: stdout ?? .file(outputName), stderr: .descriptor(pipe.writeEnd),
                errorReadEnd: pipe.readEnd)
        }
        return try start(
            program: program, bytes: arguments, in: sandbox, stdin: stdin,
            stdout: stdout ?? .file(outputName), stderr: .file(errorName))
    }

    private static func start(
        program: String, bytes arguments: [[UInt8]], in sandbox: Sandbox, stdin: Stream,
        stdout: Stream, stderr: Stream, errorReadEnd: Int32? = nil, environment: [String] = []
    ) throws -> RunningProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (descriptor, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path):
                let flags = descriptor == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_TRUNC
                posix_spawn_file_actions_addopen(&actions, descriptor, path, flags, 0o644)
            case .descriptor(let source):
                posix_spawn_file_actions_adddup2(&actions, source, descriptor)
            }
        }

        // The test runner may ignore or block signals; the child starts with the defaults.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGXFSZ] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        // `posix_spawn_file_actions_addchdir_np` is not visible from Swift here: a shell changes
        // directory and `exec`s the program, which keeps the shell's process id.
        let launcher = [Array("sh".utf8), Array("-c".utf8), Array(#"cd -- "$0" && exec "$@""#.utf8), Array(sandbox.root.utf8)]
        let argv = (launcher + [Array(program.utf8)] + arguments).map(cString)
        defer { argv.forEach { free($0) } }
        let environmentStrings = ProcessInfo.processInfo.environment
            .filter { $0.key != "SLUICE" }
            .map { "\($0.key)=\($0.value)" } + environment
        let envp = environmentStrings.map { cString(Array($0.utf8)) }
        defer { envp.forEach { free($0) } }

        var pid: pid_t = 0
        let started = ContinuousClock.now
        let spawn = {
            (argv + [nil]).withUnsafeBufferPointer { argvBuffer in
                (envp + [nil]).withUnsafeBufferPointer { envpBuffer in
                    posix_spawn(&pid, "/bin/sh", &actions, &attributes, argvBuffer.baseAddress!, envpBuffer.baseAddress!)
                }
            }
        }
        // The child closes every descriptor above 2 that it did not get on purpose, so no
        // spawn needs to wait for another test's pipe to be made close-on-exec: no lock, which
        // would block a thread of the cooperative pool (two here) while another test's spawn
        // runs. Without `closefrom` (glibc before 2.34), the lock.
        let result: Int32
        if let addCloseFrom {
            _ = addCloseFrom(&actions, 3)
            result = spawn()
        } else {
            result = spawnLock.withLock { _ in spawn() }
        }
        guard result == 0 else {
            if let errorReadEnd { close(errorReadEnd) }
            throw SpawnError(program: program, code: result)
        }
        var outputPath: String?
        if case .file(let path) = stdout { outputPath = path }
        var errorPath: String?
        if case .file(let path) = stderr { errorPath = path }
        return RunningProcess(
            pid: pid, started: started, outputPath: outputPath, errorPath: errorPath, errorReadEnd: errorReadEnd)
    }

    private static func cString(_ bytes: [UInt8]) -> UnsafeMutablePointer<CChar>? {
        let pointer = malloc(bytes.count + 1)!.assumingMemoryBound(to: CChar.self)
        bytes.withUnsafeBytes { buffer in
            if let base = buffer.baseAddress { memcpy(pointer, base, bytes.count) }
        }
        pointer[bytes.count] = 0
        return pointer
    }

    /// `sluice` beside the test bundle: in the directory of the running executable
    /// (`.build/<triple>/debug/` for `swift test`, whichever build directory a sanitizer uses),
    /// else under the package's `.build`.
    private static func locateBinary() -> String {
        let manager = FileManager.default
        if let override = ProcessInfo.processInfo.environment["SLUICE_BINARY"] { return override }
        var candidates: [URL] = []
        if let executable = try? manager.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: executable).deletingLastPathComponent())
        }
        candidates.append(Bundle.main.bundleURL)
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        for directory in candidates {
            let path = directory.appendingPathComponent("sluice").path
            if manager.isExecutableFile(atPath: path) { return path }
        }
        // Tests/SluiceCLITests/Support/CLIRunner.swift -> the package root.
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let build = root.appendingPathComponent(".build")
        var found: [String] = [build.appendingPathComponent("debug/sluice").path]
        for triple in (try? manager.contentsOfDirectory(atPath: build.path)) ?? [] {
            found.append(build.appendingPathComponent("\(triple)/debug/sluice").path)
        }
        let newest = found.filter { manager.isExecutableFile(atPath: $0) }.max { first, second in
            let a = (try? manager.attributesOfItem(atPath: first))?[.modificationDate] as? Date
            let b = (try? manager.attributesOfItem(atPath: second))?[.modificationDate] as? Date
            return (a ?? .distantPast) < (b ?? .distantPast)
        }
        return newest ?? build.appendingPathComponent("debug/sluice").path
    }
}

struct SpawnError: Error, CustomStringConvertible {
    var program: String
    var code: Int32
    var description: String { "posix_spawn \(program): \(String(cString: strerror(code)))" }
}

/// A child started by ``CLI``, not yet waited for.
final class RunningProcess: Sendable {
    let pid: pid_t
    private let started: ContinuousClock.Instant
    private let outputPath: String?
    private let errorPath: String?
    private let errorReadEnd: Int32?
    /// Bytes read from the standard error pipe and not yet returned as lines.
    private let pending = Mutex<[UInt8]>([])
    /// Every byte read from the standard error pipe.
    private let collected = Mutex<[UInt8]>([])

    fileprivate init(pid: pid_t, started: ContinuousClock.Instant, outputPath: String?, errorPath: String?, errorReadEnd: Int32?) {
        self.pid = pid
        self.started = started
        self.outputPath = outputPath
        self.errorPath = errorPath
        self.errorReadEnd = errorReadEnd
    }

    /// Sends `number` to the child (`kill(2)`).
    func send(signal number: Int32) {
        kill(pid, number)
    }

    /// The next line the child writes to standard error (without its newline), or `nil` at the
    /// end of the stream. Only for a child started with `errorPipe: true`.
    func nextErrorLine() async -> String? {
        guard let descriptor = errorReadEnd else { preconditionFailure("standard error is not a pipe") }
        return await onThread { [self] in
            while true {
                let line = pending.withLock { buffer -> [UInt8]? in
                    guard let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
                    defer { buffer.removeSubrange(...newline) }
                    return Array(buffer[..<newline])
                }
                if let line { return String(decoding: line, as: UTF8.self) }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return nil }
                let bytes = Array(chunk[..<count])
                pending.withLock { $0 += bytes }
                collected.withLock { $0 += bytes }
            }
        }
    }

    /// Reads the rest of standard error, waits for the child and collects what it wrote.
    func finish() async -> CLIResult {
        await onThread { [self] in
            if let descriptor = errorReadEnd {
                var chunk = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else { break }
                    let bytes = Array(chunk[..<count])
                    collected.withLock { $0 += bytes }
                }
                close(descriptor)
            }
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
            let exited = ContinuousClock.now
            let elapsed = exited - started
            let signal = raw & 0x7f
            let status = signal == 0 ? (raw >> 8) & 0xff : 128 + signal
            let output = outputPath.flatMap { FileManager.default.contents(atPath: $0) }.map { [UInt8]($0) } ?? []
            let error: [UInt8]
            if let errorPath {
                error = FileManager.default.contents(atPath: errorPath).map { [UInt8]($0) } ?? []
            } else {
                error = collected.withLock { $0 }
            }
            if let outputPath { unlink(outputPath) }
            if let errorPath { unlink(errorPath) }
            return CLIResult(
                status: status, signal: signal == 0 ? nil : signal, stdout: output,
                stderr: String(decoding: error, as: UTF8.self), elapsed: elapsed, exited: exited)
        }
    }
}

/// A pipe whose ends are close-on-exec in the test process, so no other concurrently spawned
/// child inherits them (a leaked read end would keep a writer from ever seeing `EPIPE`).
struct Pipe: Sendable {
    let readEnd: Int32
    let writeEnd: Int32

    static func make() throws -> Pipe {
        // `pipe2` is not visible from Swift here: `pipe` and `fcntl` under the lock that every
        // spawn takes, so no child is spawned between the two calls.
        try spawnLock.withLock { _ in
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { throw SpawnError(program: "pipe", code: errno) }
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            return Pipe(readEnd: ends[0], writeEnd: ends[1])
        }
    }

    func closeReadEnd() { close(readEnd) }
    func closeWriteEnd() { close(writeEnd) }
}

/// Held around `posix_spawn` and around making a descriptor close-on-exec, where the child
/// cannot close what it inherited by mistake (``addCloseFrom`` is `nil`).
let spawnLock = Mutex<Void>(())

/// `posix_spawn_file_actions_addclosefrom_np(3)` (glibc 2.34 and later), looked up at run time:
/// Swift's Glibc module does not declare it (it needs `_GNU_SOURCE`). The spawned child then
/// closes every descriptor from the one given up.
let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
    guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
    return unsafeBitCast(
        symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
}()

/// Runs `body` on a thread of its own and returns its result: blocking calls stay off the
/// cooperative pool (two threads on this machine).
func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.start()
    }
}
