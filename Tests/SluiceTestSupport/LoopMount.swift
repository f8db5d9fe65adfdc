#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import Sluice

/// A small file system of its own for one test: an image file under `$TMPDIR` (else `/tmp`),
/// formatted (`mkfs.xfs -m reflink=1`, `mkfs.btrfs`) and loop-mounted, then unmounted and
/// removed whatever the test did.
///
/// Needs root, loop devices and the `mkfs` of the file system (CI installs `xfsprogs` and
/// `btrfs-progs`): ``unavailableReason(_:)`` says what is missing, for a test's `.enabled(if:)`
/// trait, and ``with(_:size:_:)`` throws ``Unavailable`` when the mount itself is refused (a
/// container without loop devices), which a test reports as skipped with `Test.cancel`.
public enum LoopMount {
    /// A file system the tests mount.
    public enum Kind: String, Sendable {
        case xfs, btrfs

        var mkfs: [String] {
            switch self {
            case .xfs: ["mkfs.xfs", "-q", "-f", "-m", "reflink=1"]
            case .btrfs: ["mkfs.btrfs", "-q", "-f"]
            }
        }
    }

    /// Why a loop mount cannot be made here.
    public struct Unavailable: Error, CustomStringConvertible {
        /// What failed, with the tool's own message.
        public var description: String
    }

    /// Why no `kind` file system can be mounted here (not root, no loop devices, no `mkfs`), or
    /// `nil` when nothing says so before trying.
    public static func unavailableReason(_ kind: Kind) -> String? {
        if getuid() != 0 { return "loop mounts need root" }
        if access("/dev/loop-control", F_OK) != 0 { return "no loop devices (/dev/loop-control)" }
        if Tool.find(kind.mkfs[0]) == nil { return "\(kind.mkfs[0]) is not installed" }
        if Tool.find("mount") == nil || Tool.find("umount") == nil { return "mount or umount is not installed" }
        return nil
    }

    /// Whether a `kind` file system can be tried (``unavailableReason(_:)`` is `nil`).
    public static func isPossible(_ kind: Kind) -> Bool { unavailableReason(kind) == nil }

    /// Makes a `size`-byte `kind` file system, mounts it, runs `body` with its mount point,
    /// then unmounts it and removes the image and the mount point, also when `body` throws.
    ///
    /// - Throws: ``Unavailable`` when formatting or mounting fails; what `body` throws.
    public static func with<R>(
        _ kind: Kind, size: Int64 = 400 << 20, _ body: (Pathname) async throws -> R
    ) async throws -> R {
        if let reason = unavailableReason(kind) { throw Unavailable(description: reason) }
        let scratch = try ScratchDirectory(prefix: "sluice-\(kind.rawValue)")
        defer { scratch.remove() }
        let image = scratch.appending("image")
        let mountPoint = scratch.appending("mnt")
        guard mkdir("\(mountPoint)", 0o755) == 0 else { throw Unavailable(description: "mkdir: \(ErrorNumber(rawValue: errno))") }
        let descriptor = try Descriptor.open(image, O_WRONLY | O_CREAT | O_EXCL, permissions: 0o600)
        try descriptor.closeAfter { () throws in try descriptor.setSize(size) }
        try await run(kind.mkfs + ["\(image)"])
        try await run(["mount", "-o", "loop", "\(image)", "\(mountPoint)"])
        let result: R
        do {
            result = try await body(mountPoint)
        } catch {
            await unmount(mountPoint)
            throw error
        }
        await unmount(mountPoint)
        return result
    }

    /// `umount`, and a lazy one if a file is still open.
    private static func unmount(_ mountPoint: Pathname) async {
        if (try? await run(["umount", "\(mountPoint)"])) == nil {
            _ = try? await run(["umount", "-l", "\(mountPoint)"])
        }
    }

    /// Runs `arguments` (the first one found in `$PATH`), waiting on the process's own
    /// termination handler, never blocking a thread of the cooperative pool.
    ///
    /// - Throws: ``Unavailable`` with the standard error when it exits with a non-zero status.
    private static func run(_ arguments: [String]) async throws {
        guard let executable = Tool.find(arguments[0]) else { throw Unavailable(description: "\(arguments[0]) is not installed") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(arguments.dropFirst())
        // Standard error to a file, not a pipe: a child of another test that inherited a pipe's
        // write end would keep a read to its end waiting until that child exits.
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-loop-\(UUID().uuidString).err")
        guard FileManager.default.createFile(atPath: errorFile.path, contents: nil) else {
            throw Unavailable(description: "cannot create \(errorFile.path)")
        }
        defer { try? FileManager.default.removeItem(at: errorFile) }
        let errors = try FileHandle(forWritingTo: errorFile)
        defer { try? errors.close() }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in continuation.resume() }
            do { try process.run() } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        let message = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
        guard process.terminationStatus == 0 else {
            throw Unavailable(description: "\(arguments.joined(separator: " ")): exit \(process.terminationStatus): \(message)")
        }
    }

    /// The bytes in use on the file system that holds `path` (`statvfs(3)`: blocks minus free
    /// blocks), as `df` counts them.
    public static func usedBytes(at path: Pathname) throws -> Int64 {
        var info = statvfs()
        guard statvfs("\(path)", &info) == 0 else { throw ErrorNumber(rawValue: errno) }
        return Int64(info.f_blocks - info.f_bfree) * Int64(info.f_frsize)
    }
}
