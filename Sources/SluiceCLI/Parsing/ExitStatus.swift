/// The program's exit statuses (README, "Exit status").
enum ExitStatus {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let warning: Int32 = 2
    static let usage: Int32 = 64
    static let brokenPipe: Int32 = 141
    /// Not an exit status: what a command returns when a signal cancelled it; `main` turns it
    /// into 128 + the signal's number.
    static let interrupted: Int32 = -1

    /// The status of a process stopped by signal `number`: 128 + `number` (130 for SIGINT).
    static func signal(_ number: Int32) -> Int32 { 128 + number }
}
