import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Sluice
import SluiceTestSupport

/// The names in `directory` that look like a ``FileSink`` temporary file (`.sluice-*.tmp`).
func temporaryFiles(in directory: Pathname) throws -> [Pathname] {
    try entries(in: directory).filter { name in
        name.bytes.starts(with: Array(".sluice-".utf8)) && name.hasSuffix(".tmp")
    }
}

/// Creates (or truncates) `path` and writes `bytes` to it, with `permissions` (umask ignored).
func writeFile(_ path: Pathname, _ bytes: [UInt8], permissions: mode_t = 0o644) throws {
    let descriptor = try Descriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC, permissions: permissions)
    try descriptor.closeAfter { () throws in
        try bytes.withUnsafeBytes { try descriptor.write(contentsOf: $0) }
        guard fchmod(descriptor.rawValue, permissions) == 0 else { throw ErrorNumber(rawValue: errno) }
    }
}

/// Appends `bytes` to the existing file at `path`.
func appendToFile(_ path: Pathname, _ bytes: [UInt8]) throws {
    let descriptor = try Descriptor.open(path, O_WRONLY | O_APPEND)
    try descriptor.closeAfter { () throws in
        try bytes.withUnsafeBytes { try descriptor.write(contentsOf: $0) }
    }
}

/// Every byte of the file at `path`, read with plain `read(2)` calls.
func readFile(_ path: Pathname) throws -> [UInt8] {
    let descriptor = try Descriptor.open(path, O_RDONLY)
    return try descriptor.closeAfter { () throws in try readAll(descriptor) }
}

/// Reads `descriptor` from its offset to the end of the file.
func readAll(_ descriptor: Descriptor) throws -> [UInt8] {
    var result: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
        let count = try buffer.withUnsafeMutableBytes { try descriptor.read(into: $0) }
        if count == 0 { return result }
        result += buffer[..<count]
    }
}

/// Whether anything (a dangling symbolic link included) exists at `path`.
func exists(_ path: Pathname) -> Bool {
    (try? FileStatus.of(path, followsLinks: false)) != nil
}

/// A new pipe; the caller closes both ends.
///
/// Both ends are close-on-exec, atomically (`pipe2(2)`): the CLI tests in the same process spawn
/// children all the time, and a child that inherited a write end would keep a reader here from
/// ever seeing the end of the pipe.
func makePipe() throws -> (read: Descriptor, write: Descriptor) {
    var ends: [CInt] = [-1, -1]
    guard pipe2(&ends, O_CLOEXEC) == 0 else { throw ErrorNumber(rawValue: errno) }
    return (Descriptor(rawValue: ends[0]), Descriptor(rawValue: ends[1]))
}

/// The bytes the file at `path` has on the disk: `st_blocks` × 512 (what `du` counts).
func allocatedBytes(_ path: Pathname) throws -> Int64 {
    var raw = stat()
    guard stat("\(path)", &raw) == 0 else { throw ErrorNumber(rawValue: errno) }
    return Int64(raw.st_blocks) * 512
}

/// Makes a sparse file of `size` bytes at `path` whose only data are `extents` (offset and
/// bytes): `ftruncate(2)`, then `pwrite(2)` of each extent.
func writeSparseFile(_ path: Pathname, size: Int64, extents: [(offset: Int64, bytes: [UInt8])]) throws {
    let descriptor = try Descriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC, permissions: 0o644)
    try descriptor.closeAfter { () throws in
        try descriptor.setSize(size)
        for extent in extents {
            try extent.bytes.withUnsafeBytes { try descriptor.write(toAbsoluteOffset: extent.offset, $0) }
        }
    }
}

/// The content of a file made by ``writeSparseFile(_:size:extents:)``, as `read(2)` gives it.
func sparseContent(size: Int64, extents: [(offset: Int64, bytes: [UInt8])]) -> [UInt8] {
    var content = [UInt8](repeating: 0, count: Int(size))
    for extent in extents { content.replaceSubrange(Int(extent.offset)..<Int(extent.offset) + extent.bytes.count, with: extent.bytes) }
    return content
}
