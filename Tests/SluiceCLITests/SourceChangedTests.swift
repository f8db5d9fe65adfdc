#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SluiceTestSupport
import Testing

/// C54: a file that changes while it is read is reported, as gzip ("file size changed while
/// zipping") and tar ("file changed as we read it") do: a warning naming the file and what
/// changed, exit 2, the output valid. The change comes once a progress line shows bytes read;
/// the rate limit keeps the read going past it. Whether the read saw the change is told by
/// what it read (less than the file had, or more), not by timing: a run whose change came after
/// the read ended proves nothing and is made again (at most 5 times).
@Suite(.timeLimit(.minutes(3)))
struct SourceChangedTests {
    enum Change: String, CaseIterable, Sendable { case shrinks, grows }

    static let size = 16 << 20

    @Test(arguments: ["copy", "compress"], Change.allCases)
    func aFileThatChangesWhileReadIsAWarning(command: String, change: Change) async throws {
        for _ in 0..<5 {
            let sandbox = try Sandbox()
            try sandbox.write(pattern(count: Self.size, seed: 54), to: "log")
            let arguments = command == "copy" ? ["copy", "--limit-rate", "4M", "--progress=json", "log", "out"]
                : ["compress", "--limit-rate", "4M", "--progress=json", "-o", "out", "log"]
            let process = try CLI.start(arguments, in: sandbox, errorPipe: true)
            // Once a line counts bytes read, the file is open and being read (the first line may
            // come before the open).
            while let line = await process.nextErrorLine(), line.contains("\"bytesCompleted\":0,") {}
            switch change {
            case .shrinks: #expect(truncate(sandbox.path("log"), 4 << 20) == 0)
            case .grows:
                let appended = try await CLI.shell("head -c 1048576 /dev/zero >> log", in: sandbox)
                #expect(appended.status == 0)
            }
            let result = await process.finish()
            let read: Int
            if command == "compress" {
                let decoded = try await CLI.shell("gzip -dc out | wc -c", in: sandbox)
                #expect(decoded.status == 0, "\(decoded.stderr)")
                read = Int(String(decoding: decoded.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
            } else {
                read = Int(sandbox.status("out")?.st_size ?? -1)
            }
            // The change came after the read ended: nothing to tell.
            if read == Self.size { continue }
            #expect(change == .shrinks ? read < Self.size : read > Self.size, "\(read) bytes read")
            #expect(result.status == 2, "\(result.stderr)")
            #expect(result.stderr.contains("'log': file changed as we read it (size"), "\(result.stderr)")
            return
        }
        Issue.record("in 5 runs the change never came before the read ended")
    }

    /// Files of /proc and /sys, whose sizes mean nothing, stay silent (C13).
    @Test func procAndSysStaySilent() async throws {
        let sandbox = try Sandbox()
        for source in ["/proc/version", "/proc/self/status", "/sys/class/net/lo/address"] {
            let result = try await CLI.run(["copy", "-f", source, "copy"], in: sandbox)
            #expect(result.status == 0, "\(source): \(result.stderr)")
            #expect(result.stderr.isEmpty, "\(source): \(result.stderr)")
        }
    }
}
