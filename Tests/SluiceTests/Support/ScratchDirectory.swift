import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Sluice

/// A fresh directory under /tmp for one test (`mkdtemp(3)`), addressed as a ``FilePath`` so
/// that names which are not UTF-8 work, and removed with everything in it at the end.
///
/// ```swift
/// try await withScratchDirectory { directory in
///     let file = directory.appending("data.bin")
///     try writeFile(file, [1, 2, 3])
/// }
/// ```
struct ScratchDirectory {
    let path: FilePath

    init() throws {
        var template = Array("/tmp/sluice-test-XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard let created else { throw Errno(rawValue: errno) }
        path = FilePath(cString: created)
    }

    /// Removes the directory and everything below it; errors are ignored.
    func remove() {
        Self.removeTree(path)
    }

    /// `path/component`.
    func appending(_ component: FilePath) -> FilePath {
        path.appending(component)
    }

    private static func removeTree(_ path: FilePath) {
        if let status = try? FileStatus.of(path, followingSymlinks: false), status.kind == .directory {
            for name in (try? entries(in: path)) ?? [] {
                removeTree(path.appending(name))
            }
            _ = path.withCString { rmdir($0) }
        } else {
            _ = path.withCString { unlink($0) }
        }
    }
}

/// Runs `body` with a fresh scratch directory, then removes it, whatever `body` did.
func withScratchDirectory<R>(_ body: (ScratchDirectory) async throws -> R) async throws -> R {
    let directory = try ScratchDirectory()
    defer { directory.remove() }
    return try await body(directory)
}

/// The names in `directory`, without `.` and `..`, sorted by their bytes.
func entries(in directory: FilePath) throws -> [FilePath] {
    guard let stream = directory.withCString({ opendir($0) }) else {
        throw FileError.opendir(path: directory, errno: Errno(rawValue: errno))
    }
    defer { closedir(stream) }
    var names: [FilePath] = []
    while let entry = readdir(stream) {
        let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
            pointer.withMemoryRebound(to: CChar.self, capacity: 256) { FilePath(cString: $0) }
        }
        if name.bytes == Array(".".utf8) || name.bytes == Array("..".utf8) { continue }
        names.append(name)
    }
    return names.sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
}

/// The names in `directory` that look like a ``FileSink`` temporary file (`.sluice-*.tmp`).
func temporaryFiles(in directory: FilePath) throws -> [FilePath] {
    try entries(in: directory).filter { name in
        name.bytes.starts(with: Array(".sluice-".utf8)) && name.hasSuffix(".tmp")
    }
}

/// Creates (or truncates) `path` and writes `bytes` to it, with `permissions` (umask ignored).
func writeFile(_ path: FilePath, _ bytes: [UInt8], permissions: mode_t = 0o644) throws {
    let descriptor = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC, permissions: permissions)
    try descriptor.closeAfter { () throws in
        try bytes.withUnsafeBytes { try descriptor.write(contentsOf: $0) }
        guard fchmod(descriptor.rawValue, permissions) == 0 else { throw Errno(rawValue: errno) }
    }
}

/// Appends `bytes` to the existing file at `path`.
func appendToFile(_ path: FilePath, _ bytes: [UInt8]) throws {
    let descriptor = try FileDescriptor.open(path, O_WRONLY | O_APPEND)
    try descriptor.closeAfter { () throws in
        try bytes.withUnsafeBytes { try descriptor.write(contentsOf: $0) }
    }
}

/// Every byte of the file at `path`, read with plain `read(2)` calls.
func readFile(_ path: FilePath) throws -> [UInt8] {
    let descriptor = try FileDescriptor.open(path, O_RDONLY)
    return try descriptor.closeAfter { () throws in try readAll(descriptor) }
}

/// Reads `descriptor` from its offset to the end of the file.
func readAll(_ descriptor: FileDescriptor) throws -> [UInt8] {
    var result: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
        let count = try buffer.withUnsafeMutableBytes { try descriptor.read(into: $0) }
        if count == 0 { return result }
        result += buffer[..<count]
    }
}

/// Whether anything (a dangling symbolic link included) exists at `path`.
func exists(_ path: FilePath) -> Bool {
    (try? FileStatus.of(path, followingSymlinks: false)) != nil
}

/// A new pipe; the caller closes both ends.
///
/// Both ends are close-on-exec, atomically (`pipe2(2)`): the CLI tests in the same process spawn
/// children all the time, and a child that inherited a write end would keep a reader here from
/// ever seeing the end of the pipe.
func makePipe() throws -> (read: FileDescriptor, write: FileDescriptor) {
    var ends: [CInt] = [-1, -1]
    guard pipe2(&ends, O_CLOEXEC) == 0 else { throw Errno(rawValue: errno) }
    return (FileDescriptor(rawValue: ends[0]), FileDescriptor(rawValue: ends[1]))
}

/// `count` bytes from a seeded generator.
func randomBytes(count: Int, seed: UInt64) -> [UInt8] {
    var generator = SplitMix64(seed: seed)
    var bytes = [UInt8](repeating: 0, count: count)
    var index = 0
    while index < count {
        var word = generator.next()
        for _ in 0..<8 where index < count {
            bytes[index] = UInt8(truncatingIfNeeded: word)
            word >>= 8
            index += 1
        }
    }
    return bytes
}

/// A one-shot event that tasks can wait for; opening it resumes every waiter, now and later.
final class Latch: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = LockedValue(State())

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isOpen = state.withLock { state -> Bool in
                if state.isOpen { return true }
                state.waiters.append(continuation)
                return false
            }
            if isOpen { continuation.resume() }
        }
    }
}

/// A counter that several threads may bump (for fake system calls and sources).
final class Counter: Sendable {
    private let value = LockedValue(0)

    /// Adds one and returns the new value.
    @discardableResult
    func increment() -> Int {
        value.withLock { value in
            value += 1
            return value
        }
    }

    var current: Int { value.withLock { $0 } }
}
