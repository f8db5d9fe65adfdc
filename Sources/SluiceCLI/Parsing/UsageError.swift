/// A command line that cannot be run as written: exit status 64, the message, a usage line and
/// a hint to `--help`.
struct UsageError: Error, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// The program exit statuses (README, "Exit status").
enum ExitStatus {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let warning: Int32 = 2
    static let usage: Int32 = 64
    static let brokenPipe: Int32 = 141
    /// Not an exit status: what a command returns when a signal cancelled it; `main` turns it
    /// into 128 + the signal's number.
    static let interrupted: Int32 = -1
    static func signal(_ number: Int32) -> Int32 { 128 + number }
}
