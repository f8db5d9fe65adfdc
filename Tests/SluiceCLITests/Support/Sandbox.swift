#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Sluice
import SluiceTestSupport

/// A ``ScratchDirectory`` of one test, removed with everything in it when the value goes away,
/// with the file operations the command-line tests need.
///
/// File names are bytes (`[UInt8]`) where a test needs a name that is not UTF-8; the `String`
/// overloads cover the rest.
final class Sandbox: Sendable {
    private let directory: ScratchDirectory
    /// The directory's absolute path.
    let root: String

    init() throws {
        directory = try ScratchDirectory(prefix: "sluice-cli")
        root = String(decoding: directory.path.bytes, as: UTF8.self)
    }

    deinit {
        directory.remove()
    }

    /// The absolute path of `name` in the sandbox.
    func path(_ name: String) -> String { root + "/" + name }

    /// The sandbox's file system (`fstatfs(2)`), which decides a copy's path.
    func fileSystemType() throws -> FileSystemType { try directory.fileSystemType() }

    /// The path `sluice copy` takes for a dense regular file within the sandbox.
    func plainCopyPath() throws -> CopyMethod {
        let type = try fileSystemType()
        if CopyMethod.cloningFileSystems.contains(type) { return .clone }
        return CopyMethod.kernelCopyFileSystems.contains(type) ? .kernelCopy : .pipeline
    }

    func path(bytes name: [UInt8]) -> [UInt8] { Array(root.utf8) + [UInt8(ascii: "/")] + name }

    func write(_ bytes: [UInt8], to name: String) throws {
        try write(bytes, toBytes: Array(name.utf8))
    }

    func write(_ text: String, to name: String) throws {
        try write(Array(text.utf8), to: name)
    }

    func write(_ bytes: [UInt8], toBytes name: [UInt8]) throws {
        let descriptor = withCPath(name) { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        guard descriptor >= 0 else { throw SpawnError(program: "open", code: errno) }
        defer { close(descriptor) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            guard written > 0 else { throw SpawnError(program: "write", code: errno) }
            offset += written
        }
    }

    /// The bytes of `name`, or `nil` if it cannot be opened.
    func contents(_ name: String) -> [UInt8]? {
        contents(bytes: Array(name.utf8))
    }

    func contents(bytes name: [UInt8]) -> [UInt8]? {
        let descriptor = withCPath(name) { open($0, O_RDONLY | O_CLOEXEC) }
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return count == 0 ? result : nil }
            result += buffer[..<count]
        }
    }

    func text(_ name: String) -> String? {
        contents(name).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether `name` exists, without following a final symbolic link (`lstat(2)`).
    func exists(_ name: String) -> Bool {
        var status = stat()
        return lstat(path(name), &status) == 0
    }

    /// `lstat(2)` of `name`, or `stat(2)` when `following`.
    func status(_ name: String, following: Bool = false) -> stat? {
        var status = stat()
        let result = following ? stat(path(name), &status) : lstat(path(name), &status)
        return result == 0 ? status : nil
    }

    /// The names in `directory` (relative to the sandbox, `""` for its root), as `ls -A` lists
    /// them, as bytes.
    func entries(_ directory: String = "") -> [[UInt8]] {
        let path = directory.isEmpty ? self.directory.path : self.directory.appending(Pathname(directory))
        return ((try? SluiceTestSupport.entries(in: path)) ?? []).map(\.bytes)
    }

    /// `ls -A` names as text (bytes that are not UTF-8 replaced).
    func listing(_ directory: String = "") -> [String] {
        entries(directory).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Temporary files a ``FileSink`` left in `directory`: `.sluice-*.tmp`.
    func leftovers(_ directory: String = "") -> [String] {
        listing(directory).filter { $0.hasPrefix(".sluice-") }
    }

    /// The unnamed (`O_TMPFILE`) files that process `pid` holds open in `directory`: a
    /// ``FileSink``'s data before its commit point, which `ls` cannot see. `/proc/PID/fd` shows
    /// each as `<directory>/#<inode> (deleted)`.
    func unnamedFiles(openBy pid: pid_t, in directory: String = "") -> [String] {
        let real = URL(fileURLWithPath: path(directory)).resolvingSymlinksInPath().path
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return descriptors.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)") }
            .filter { $0.hasPrefix(real + "/#") && $0.hasSuffix(" (deleted)") }
    }

    func makeDirectory(_ name: String) throws {
        guard mkdir(path(name), 0o755) == 0 else { throw SpawnError(program: "mkdir", code: errno) }
    }

    func makeSymbolicLink(_ name: String, to target: String) throws {
        guard symlink(target, path(name)) == 0 else { throw SpawnError(program: "symlink", code: errno) }
    }

    func makeHardLink(_ name: String, to existing: String) throws {
        guard link(path(existing), path(name)) == 0 else { throw SpawnError(program: "link", code: errno) }
    }

    func makeFIFO(_ name: String) throws {
        guard mkfifo(path(name), 0o644) == 0 else { throw SpawnError(program: "mkfifo", code: errno) }
    }

    /// Calls `body` with the absolute path of `name` as a C string, byte for byte (a `String`
    /// would replace bytes that are not UTF-8).
    private func withCPath<T>(_ name: [UInt8], _ body: (UnsafePointer<CChar>) -> T) -> T {
        let bytes = path(bytes: name) + [0]
        return bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) }
        }
    }
}
