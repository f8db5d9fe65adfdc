import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Sluice

extension SystemCalls {
    /// Whether `flags` ask for an unnamed file (`O_TMPFILE`, which includes `O_DIRECTORY`).
    static func asksForUnnamedFile(_ flags: CInt) -> Bool {
        flags & CSluiceShims_O_TMPFILE == CSluiceShims_O_TMPFILE
    }

    /// The real system calls, but `O_TMPFILE` refused with `EOPNOTSUPP`, as on a file system
    /// without it: a sink falls back to a named temporary file (`.sluice-*.tmp`).
    static let refusingUnnamedFiles: SystemCalls = live.refusingUnnamedFiles

    /// These system calls, with `O_TMPFILE` refused (`EOPNOTSUPP`).
    var refusingUnnamedFiles: SystemCalls {
        var calls = self
        let (open, openAt) = (self.open, self.openAt)
        calls.open = { path, flags, mode in
            SystemCalls.asksForUnnamedFile(flags) ? .failure(ErrorNumber(rawValue: EOPNOTSUPP)) : open(path, flags, mode)
        }
        calls.openAt = { directory, path, flags, mode in
            SystemCalls.asksForUnnamedFile(flags) ? .failure(ErrorNumber(rawValue: EOPNOTSUPP)) : openAt(directory, path, flags, mode)
        }
        return calls
    }
}
