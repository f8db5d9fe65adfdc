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

    /// The width of the terminal on `descriptor` in columns: `TIOCGWINSZ`, read at each call (a
    /// resized window shows at the next redraw, without a `SIGWINCH` handler that would
    /// interrupt system calls); when the terminal does not know (0), `$COLUMNS`, else 80.
    static func columns(of descriptor: Int32) -> Int {
        var size = winsize()
        if ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let text = getenv("COLUMNS").map({ String(cString: $0) }), let columns = Int(text), columns > 0 {
            return columns
        }
        return 80
    }

    /// Whether `$TERM` is `dumb` (Emacs' shell, some CI logs): a terminal that takes `\r` but
    /// no escape sequence.
    static var isDumbTerminal: Bool {
        getenv("TERM").map { String(cString: $0) } == "dumb"
    }

    /// Whether this process may draw on the terminal on `descriptor`: its process group is the
    /// terminal's foreground group (`tcgetpgrp(3)` against `getpgrp(2)`), as `pv` checks; a job
    /// put in the background (`&`, or stopped and `bg`) draws nothing until it is brought back.
    /// A terminal that is not this process's controlling terminal (`ENOTTY`) has no foreground
    /// group to compete with: it counts as the foreground.
    static func isForeground(_ descriptor: Int32) -> Bool {
        let group = tcgetpgrp(descriptor)
        return group == -1 || group == getpgrp()
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
