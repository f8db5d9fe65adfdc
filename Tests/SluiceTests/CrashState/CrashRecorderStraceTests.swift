import Foundation
import Testing
@testable import Sluice
import SluiceTestSupport

/// The recorder sees every call that changes the disk: the same operation, recorded through the
/// seam in this process and run by `sluice` under `strace -f`, shows the same kinds of mutating
/// calls on the files under the scenario's directory (strace's no more than the recorder's).
@Suite(.serialized, .timeLimit(.minutes(4)))
struct CrashRecorderStraceTests {
    /// The calls strace is asked for: every one that can change what is on disk (`?`: a name
    /// this strace does not know, such as `fchmodat2` before strace 6.6, is left out).
    static let traced = [
        "open", "openat", "creat", "write", "pwrite64", "writev", "pwritev", "pwritev2", "ftruncate", "fallocate",
        "copy_file_range", "ioctl", "fsync", "fdatasync", "sync_file_range", "syncfs", "rename", "renameat", "renameat2",
        "link", "linkat", "unlink", "unlinkat", "mkdir", "mkdirat", "symlink", "symlinkat", "mknod", "mknodat", "fchmod",
        "fchmodat", "fchmodat2", "chmod", "fchown", "fchownat", "lchown", "utimensat", "futimesat", "fsetxattr",
        "fremovexattr", "lsetxattr", "lremovexattr", "setxattr", "removexattr",
    ]

    /// One name per kind of change, for strace's names and the recorder's alike.
    static func kind(_ call: String) -> String {
        switch call {
        case "open", "openat", "creat": "openat"
        case "write", "pwrite64": "write"
        case "writev", "pwritev", "pwritev2": "writev"
        case "fsync", "fdatasync": "fsync"
        case "rename", "renameat", "renameat2": "rename"
        case "link", "linkat": "linkat"
        case "unlink", "unlinkat": "unlinkat"
        case "mkdir", "mkdirat": "mkdirat"
        case "symlink", "symlinkat": "symlinkat"
        case "mknod", "mknodat": "mknodat"
        case "chmod", "fchmodat", "fchmodat2": "fchmodat"
        case "fchown", "fchownat", "lchown": "fchownat"
        case "utimensat", "futimesat": "utimensat"
        default: call
        }
    }

    /// The kinds of mutating calls `sluice arguments` made, by strace, on paths under `root`
    /// (an `open` only when it creates or truncates, an `ioctl` only a clone, a `copy_file_range`
    /// only when it copied something), with their counts.
    static func traced(_ arguments: [String], in root: Pathname) throws -> [String: Int] {
        let log = root.appending(".strace").description
        let process = Process()
        // The usual limit on open files: the descriptor count probes each possible descriptor
        // once, which a traced process pays for per call. Only the calls traced stop it.
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", "ulimit -n 1024 && exec \"$0\" \"$@\"", try #require(Tool.strace), "-f", "--seccomp-bpf", "-y", "-qq", "-o", log,
            // LeakSanitizer cannot run under ptrace: off for the traced child of a sanitizer build.
            "-E", "ASAN_OPTIONS=detect_leaks=0",
            "-e", "trace=" + traced.map { "?" + $0 }.joined(separator: ","), try #require(Tool.sluice),
        ] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: root.description)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        var kinds: [String: Int] = [:]
        // A call another thread interrupted in the log: its start, by process, until it resumes.
        var unfinished: [Substring: String] = [:]
        for raw in try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n") {
            let pid = raw.prefix { $0.isNumber }
            var line = String(raw.dropFirst(pid.count).drop { $0 == " " })
            if line.hasSuffix("<unfinished ...>") {
                unfinished[pid] = String(line.dropLast("<unfinished ...>".count))
                continue
            }
            if line.hasPrefix("<... "), let start = unfinished.removeValue(forKey: pid), let close = line.firstIndex(of: ">") {
                line = start + line[line.index(after: close)...]
            }
            guard !line.contains("= -1"), Self.isUnder(root.description, line) else { continue }
            guard let open = line.firstIndex(of: "(") else { continue }
            let call = String(line[..<open])
            if ["open", "openat"].contains(call), !(line.contains("O_CREAT") || line.contains("O_TMPFILE") || line.contains("O_TRUNC")) { continue }
            if call == "ioctl", !line.contains("FICLONE") { continue }
            // A copy_file_range that returns 0 (the end of file) changes nothing.
            if call == "copy_file_range", line.hasSuffix("= 0") { continue }
            kinds[kind(call), default: 0] += 1
        }
        return kinds
    }

    /// Whether a call of the log acts on something under `root`: a descriptor or a path there,
    /// or a relative path (the command runs in `root`); not the libraries it loads by absolute
    /// path from its current directory, nor the log itself.
    static func isUnder(_ root: String, _ line: String) -> Bool {
        if line.contains(".strace") { return false }
        let relative = line.components(separatedBy: "AT_FDCWD<\(root)>, \"").dropFirst().contains { path in
            !path.hasPrefix("/") || path.hasPrefix(root)
        }
        return relative || line.contains("<\(root)/") || line.contains("\"\(root)") || line.contains("(\(root.count)<\(root)>")
            || line.range(of: "[0-9]+<\(NSRegularExpression.escapedPattern(for: root))>", options: .regularExpression) != nil
    }

    /// A kind as the presence check sees it: `writev` is `write`.
    static func gathered(_ kind: String) -> String { kind == "writev" ? "write" : kind }

    /// The kinds whose counts depend on timing, compared as present or not.
    static let timed: Set = ["write", "writev", "fsync", "syncfs", "sync_file_range"]

    static func recordedKinds(_ recorder: CrashRecorder) -> [String: Int] {
        recorder.calls.filter { $0 != "close" }.reduce(into: [:]) { $0[kind($1), default: 0] += 1 }
    }

    static func compare(_ name: String, recorded: CrashStateTests.Recorded, arguments: [String]) throws {
        defer { recorded.scratch.remove() }
        let straced = try traced(arguments, in: recorded.scratch.path)
        let seen = recordedKinds(recorded.recorder)
        print("recorder against strace: \(name) strace=\(straced.sorted { $0.key < $1.key }) recorder=\(seen.sorted { $0.key < $1.key })")
        #expect(!straced.isEmpty)
        // A write and a writev are one for the presence check: whether the writer took one
        // chunk or a batch depends on timing (a TSan run gave one writev in one run, writes alone
        // in the other).
        let straceKinds = Set(straced.keys.map(Self.gathered)), seenKinds = Set(seen.keys.map(Self.gathered))
        #expect(straceKinds.isSubset(of: seenKinds), "strace saw \(straceKinds.subtracting(seenKinds)) that the recorder did not")
        // The same count of each call the two runs make alike; writes (how chunks are
        // gathered), syncs and sync_file_range (where a batch ends) depend on timing.
        for kind in Set(straced.keys).union(seen.keys).subtracting(Self.timed) {
            #expect(straced[kind] == seen[kind], "\(kind): strace \(straced[kind] ?? 0), recorder \(seen[kind] ?? 0)")
        }
    }

    @Test(.enabled(if: Tool.strace != nil && Tool.sluice != nil, "needs strace and the sluice binary"))
    func aFileCopySeesWhatStraceSees() async throws {
        let recorded = try await CrashStateTests.record(setUp: { try writeFile($0.appending("in"), CrashStateTests.bytes(10_000, seed: 1)) }) {
            try await CrashStateTests.copyFile($0, $1, options: CrashStateTests.pipeline)
        }
        try Self.compare("new-file", recorded: recorded, arguments: ["copy", "--pipeline", "--chunk-size", "4096", "in", "out2"])
    }

    @Test(.enabled(if: Tool.strace != nil && Tool.sluice != nil, "needs strace and the sluice binary"))
    func aTreeCopySeesWhatStraceSees() async throws {
        let recorded = try await CrashStateTests.recordTree()
        try Self.compare("tree-archive", recorded: recorded, arguments: ["copy", "-a", "s", "t2"])
    }
}
