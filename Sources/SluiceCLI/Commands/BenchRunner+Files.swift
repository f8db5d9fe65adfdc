#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials
import Sluice

/// The benchmark's files: its own executable, its scratch directory, its input and its results.
extension BenchRunner {
    /// The path of the running `sluice` (`/proc/self/exe`), which the design runs re-execute.
    func selfExecutable() throws -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { throw Failure(description: "cannot find the sluice executable (/proc/self/exe)") }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Creates `path` unless it exists.
    func makeDirectory(_ path: Pathname) throws {
        if path.withCString({ mkdir($0, 0o755) }) != 0 && errno != EEXIST {
            throw FileError.mkdir(path: path, errno: ErrorNumber(rawValue: errno))
        }
    }

    /// A new directory of a unique name in `parent`, for one benchmark's files.
    func makeTemporaryDirectory(in parent: Pathname) throws -> Pathname {
        var template = parent.appending(".sluice-bench-XXXXXX").bytes.map { CChar(bitPattern: $0) } + [0]
        guard mkdtemp(&template) != nil else {
            throw FileError.mkdtemp(path: parent, errno: ErrorNumber(rawValue: errno))
        }
        return Pathname(bytes: template.dropLast().map { UInt8(bitPattern: $0) })
    }

    /// Removes the file at `path`, if there is one.
    func removeFile(_ path: Pathname) {
        _ = path.withCString { unlink($0) }
    }

    /// Removes the directory at `path` and everything in it.
    func removeTree(_ path: Pathname) {
        try? FileManager.default.removeItem(atPath: "\(path)")
    }

    /// Writes `size` bytes of pseudo-random data (a fixed seed: every run reads the same bytes).
    func writeInput(_ path: Pathname, size: Int64) throws {
        let descriptor = try Descriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC, permissions: 0o600)
        defer { try? descriptor.close() }
        var state: UInt64 = 0x5EED
        var block = [UInt64](repeating: 0, count: (1 << 20) / 8)
        var written: Int64 = 0
        while written < size {
            for index in block.indices {
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                block[index] = z ^ (z >> 31)
            }
            let count = Int(min(Int64(block.count * 8), size - written))
            do {
                try block.withUnsafeBytes { raw in
                    try descriptor.write(contentsOf: UnsafeRawBufferPointer(rebasing: raw[..<count]))
                }
            } catch {
                throw FileError.write(path: path, errno: error as? ErrorNumber ?? .ioError)
            }
            written += Int64(count)
        }
    }

    /// Writes `text` to `path` through a temporary file renamed into place.
    func write(_ text: String, to path: Pathname) throws {
        let temporary = Pathname(bytes: path.bytes + Array(".tmp".utf8))
        let descriptor = try Descriptor.open(temporary, O_WRONLY | O_CREAT | O_TRUNC, permissions: 0o644)
        do {
            try Array(text.utf8).withUnsafeBytes { raw in try descriptor.write(contentsOf: raw) }
            try descriptor.close()
        } catch {
            try? descriptor.close()
            throw FileError.write(path: path, errno: error as? ErrorNumber ?? .ioError)
        }
        if temporary.withCString({ from in path.withCString { to in rename(from, to) } }) != 0 {
            throw FileError.rename(path: path, errno: ErrorNumber(rawValue: errno))
        }
    }
}
