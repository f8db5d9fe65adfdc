#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Sluice

/// A fresh directory for one test, made by `mkdtemp(3)` under `$TMPDIR` (else `/tmp`) and
/// addressed as a ``Pathname``, so names that are not UTF-8 work; ``remove()`` takes it away
/// with everything in it.
///
/// ```swift
/// try await withScratchDirectory { directory in
///     let file = directory.appending("data.bin")
///     ...
/// }
/// ```
///
/// A value type that only names the directory: `Sendable`, and any copy may remove it.
public struct ScratchDirectory: Sendable {
    /// The directory's absolute path.
    public let path: Pathname

    /// Makes the directory, named `prefix` and six random characters.
    ///
    /// - Throws: the `ErrorNumber` of `mkdtemp(3)`.
    public init(prefix: String = "sluice-test") throws(ErrorNumber) {
        var parent = getenv("TMPDIR").map { String(cString: $0) } ?? ""
        if parent.isEmpty { parent = "/tmp" }
        while parent.count > 1 && parent.hasSuffix("/") { parent.removeLast() }
        var template = Array("\(parent)/\(prefix)-XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard let created else { throw ErrorNumber(rawValue: errno) }
        path = Pathname(cString: created)
    }

    /// `path/component`.
    public func appending(_ component: Pathname) -> Pathname {
        path.appending(component)
    }

    /// Removes the directory and everything below it, without following symbolic links;
    /// errors are ignored.
    public func remove() {
        Self.removeTree(path)
    }

    private static func removeTree(_ path: Pathname) {
        if let status = try? FileStatus.of(path, followsLinks: false), status.kind == .directory {
            // A read-only directory a test made (or copied) gets its owner's bits back first.
            if status.permissions & 0o700 != 0o700 { _ = path.withCString { chmod($0, mode_t(status.permissions | 0o700)) } }
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
///
/// - Throws: the `ErrorNumber` of `mkdtemp(3)`, or what `body` throws.
public func withScratchDirectory<R>(_ body: (ScratchDirectory) async throws -> R) async throws -> R {
    let directory = try ScratchDirectory()
    defer { directory.remove() }
    return try await body(directory)
}

/// The names in `directory`, without `.` and `..`, sorted by their bytes.
///
/// - Throws: the `ErrorNumber` of `opendir(3)`.
public func entries(in directory: Pathname) throws(ErrorNumber) -> [Pathname] {
    guard let stream = directory.withCString({ opendir($0) }) else { throw ErrorNumber(rawValue: errno) }
    defer { closedir(stream) }
    var names: [Pathname] = []
    while let entry = readdir(stream) {
        let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
            pointer.withMemoryRebound(to: CChar.self, capacity: 256) { Pathname(cString: $0) }
        }
        if name.bytes == Array(".".utf8) || name.bytes == Array("..".utf8) { continue }
        names.append(name)
    }
    return names.sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
}

extension ScratchDirectory {
    /// The directory's file system (`fstatfs(2)`), which decides a copy's path.
    package func fileSystemType() throws -> FileSystemType {
        let descriptor = try Descriptor.open(path, O_RDONLY | O_DIRECTORY)
        return try descriptor.closeAfter { () throws in try descriptor.fileSystemType() }
    }

    /// Whether scratch directories are on ext4 or tmpfs, where the path table copies a dense
    /// file by `copy_file_range(2)` and verifies it through the pipeline: the condition of the
    /// tests of those rows, which skip themselves elsewhere (overlayfs, XFS, Btrfs).
    package static var isOnExt4OrTmpfs: Bool {
        guard let directory = try? ScratchDirectory(prefix: "sluice-fs") else { return false }
        defer { directory.remove() }
        return (try? directory.fileSystemType()).map(CopyMethod.localKernelCopyFileSystems.contains) ?? false
    }
}
