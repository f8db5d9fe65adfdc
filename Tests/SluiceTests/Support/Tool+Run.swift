import Foundation
@testable import Sluice
import SluiceTestSupport

extension Tool {
    /// Runs `executable` with `arguments`, standard input from `input` (or empty), standard
    /// output to a file; returns the exit status and what it wrote. Files, not pipes, so no
    /// buffer can fill up while we wait.
    ///
    /// Waits for the child on a thread of its own, never on the cooperative pool (two threads
    /// here: a test blocked in `waitUntilExit` would stall every other test's tasks).
    static func run(_ executable: String, _ arguments: [String], input: [UInt8] = []) async throws -> (status: Int32, output: [UInt8]) {
        try await withScratchDirectory { directory in
            let inputPath = directory.appending("stdin")
            let outputPath = directory.appending("stdout")
            try writeFile(inputPath, input)
            try writeFile(outputPath, [])
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            let stdin = try FileHandle(forReadingFrom: URL(fileURLWithPath: "\(inputPath)"))
            let stdout = try FileHandle(forWritingTo: URL(fileURLWithPath: "\(outputPath)"))
            defer { try? stdin.close(); try? stdout.close() }
            process.standardInput = stdin
            process.standardOutput = stdout
            process.standardError = FileHandle.nullDevice
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                process.terminationHandler = { _ in continuation.resume() }
                do { try process.run() } catch {
                    process.terminationHandler = nil
                    continuation.resume(throwing: error)
                }
            }
            return (process.terminationStatus, try readFile(outputPath))
        }
    }
}
