import CZlib

/// The zlib library that ``GzipEncoder`` and ``GzipDecoder`` run on.
package enum Zlib {
    /// The version of the zlib library in use, as `zlibVersion()` answers it at run time (for
    /// example `1.2.13`): the shared library the program loaded, which may be newer than the
    /// headers it was built with (zlib manual, "Basic Functions").
    ///
    /// Concurrency: safe from any thread; reads a constant string.
    package static var version: String {
        String(cString: zlibVersion())
    }
}
