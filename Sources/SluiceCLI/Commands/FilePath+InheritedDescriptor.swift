import Sluice

extension FilePath {
    /// `/dev/stdout` (a link to `/proc/self/fd/1`) names standard output: it is written as `-`
    /// is, in place, whatever descriptor 1 is, and never replaced as a symbolic link would be.
    var isStandardOutput: Bool {
        self == "/dev/stdout" || self == "/proc/self/fd/1" || self == "/dev/fd/1"
    }
}
