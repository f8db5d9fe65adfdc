/// A command line that cannot be run as written: exit status 64, with the message, the
/// command's usage line and where to get help (``HelpText/usageError(_:)``).
struct UsageError: Error, CustomStringConvertible {
    /// What is wrong, without a prefix: `unknown option '--bogus'`.
    var message: String

    init(_ message: String) { self.message = message }

    var description: String { message }

    /// An option the command does not take, as it was written (`-x`, `--bogus`, `-6`).
    static func unknownOption(_ spelling: String) -> UsageError {
        UsageError("unknown option '\(spelling)'")
    }
}
