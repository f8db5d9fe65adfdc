#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A pseudo-terminal opened by the test (`/dev/ptmx`, as `posix_openpt(3)` does) with a set window size: a child gets
/// the terminal side as a standard descriptor, the test reads what it drew from the other side.
///
/// The terminal is not the child's controlling terminal, so `tcgetpgrp(3)` answers `ENOTTY`
/// there: a foreground of its own (a background job needs `script` and job control instead).
final class PseudoTerminal: Sendable {
    /// The test's side: what the child writes to the terminal is read here.
    let master: Int32
    /// The terminal side, for the child (close-on-exec in the test, so no other child inherits it).
    let terminal: Int32
    /// Everything read from ``master`` so far.
    private let received = Mutex<[UInt8]>([])

    /// Opens a pair and sets its window to `columns` × `rows` (`TIOCSWINSZ`; 0 means unknown).
    init(columns: UInt16, rows: UInt16 = 24) throws {
        // posix_openpt, unlockpt and ptsname are hidden from Swift here: their Linux form, the
        // ioctls of pty(7) (`_IOW('T', 0x31, int)` and `_IOR('T', 0x30, unsigned int)`, macros
        // Swift does not import).
        let unlock: UInt = 0x4004_5431  // TIOCSPTLCK
        let number: UInt = 0x8004_5430  // TIOCGPTN
        let (master, terminal) = try spawnLock.withLock { _ throws -> (Int32, Int32) in
            let master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
            guard master >= 0 else { throw SpawnError(program: "/dev/ptmx", code: errno) }
            var locked: Int32 = 0
            var index: UInt32 = 0
            guard ioctl(master, unlock, &locked) == 0, ioctl(master, number, &index) == 0 else {
                let code = errno
                close(master)
                throw SpawnError(program: "TIOCSPTLCK/TIOCGPTN", code: code)
            }
            let terminal = open("/dev/pts/\(index)", O_RDWR | O_NOCTTY | O_CLOEXEC)
            guard terminal >= 0 else {
                let code = errno
                close(master)
                throw SpawnError(program: "open /dev/pts/\(index)", code: code)
            }
            return (master, terminal)
        }
        self.master = master
        self.terminal = terminal
        var size = winsize(ws_row: rows, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
        guard ioctl(terminal, UInt(TIOCSWINSZ), &size) == 0 else { throw SpawnError(program: "TIOCSWINSZ", code: errno) }
    }

    deinit {
        close(master)
    }

    /// Closes the test's copy of the terminal side once a child holds it: the master then reads
    /// the end (`EIO`) when the child exits.
    func closeTerminal() {
        close(terminal)
    }

    /// Everything read so far, as text.
    var text: String { String(decoding: received.withLock { $0 }, as: UTF8.self) }

    /// Reads until `condition` holds for everything read so far, or the terminal side is closed
    /// by every holder. Returns whether the condition held.
    @discardableResult
    func read(until condition: @escaping @Sendable (String) -> Bool) async -> Bool {
        await onThread { [self] in
            while !condition(text) {
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = chunk.withUnsafeMutableBytes { Glibc.read(master, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }  // EIO: no holder of the terminal side is left
                received.withLock { $0 += chunk[..<count] }
            }
            return true
        }
    }

    /// Reads everything up to the end (every holder of the terminal side closed it).
    func readToEnd() async -> String {
        await read { _ in false }
        return text
    }
}
