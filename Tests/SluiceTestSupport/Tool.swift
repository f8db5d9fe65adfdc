import Foundation

/// The programs the tests compare Sluice against or run it under, found as a shell finds
/// them; a test that needs one is skipped where it is `nil` (CI installs them all).
public enum Tool {
    /// `gzip`, the reference for every gzip test.
    public static let gzip = find("gzip")
    /// `pigz`, a second encoder (multithreaded, members of its own shape).
    public static let pigz = find("pigz")
    /// `python3`, for streams its `zlib` writes.
    public static let python3 = find("python3")
    /// `script` (util-linux), which gives a child a terminal.
    public static let script = find("script")
    /// GNU time, at its usual path: the shell keyword `time` cannot report memory.
    public static let gnuTime: String? =
        FileManager.default.isExecutableFile(atPath: "/usr/bin/time") ? "/usr/bin/time" : nil

    /// `strace`, which shows every system call a process makes.
    public static let strace = find("strace")
    /// The `sluice` binary built beside the running test bundle, or `nil`.
    public static let sluice: String? = {
        guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        let path = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("sluice").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }()

    /// The path of the first executable named `name` in the directories of `$PATH` (else
    /// `/usr/bin:/bin`), or `nil`.
    public static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
