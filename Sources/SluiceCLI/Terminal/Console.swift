#if canImport(Glibc)
import Glibc
#endif

/// Writes to the process's standard error and standard output with `write(2)`, unbuffered, so
/// that messages and progress lines interleave in the order they were made.
enum Console {
    /// Writes `text` to standard error as it is.
    static func writeError(_ text: String) {
        write(text, to: 2)
    }

    /// Writes `sluice: <message>` and a newline to standard error.
    static func message(_ message: String) {
        writeError("sluice: \(message)\n")
    }

    /// Writes `text` to standard output as it is.
    static func writeOutput(_ text: String) {
        write(text, to: 1)
    }

    /// Whether the descriptor is a terminal (`isatty(3)`).
    static func isTerminal(_ descriptor: Int32) -> Bool {
        isatty(descriptor) == 1
    }

    private static func write(_ text: String, to descriptor: Int32) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}
