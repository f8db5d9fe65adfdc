/// Writes benchmark runs as CSV (RFC 4180): a header line, then one row per counted run, CRLF
/// line endings, fields quoted when they hold a comma, a quote, CR or LF (quotes doubled).
///
/// A field that was not measured is empty: the speed of a run that failed, the memory of the
/// reference commands `cp`, `cat` and `dd` (their `ru_maxrss` would be this process's own, see
/// ``ChildProcess``), the chunk size of `cp` and `cat` (they choose their own).
/// `cpu_seconds` is the child's user and system time from `wait4(2)`, for every row.
public enum CSVWriter {
    /// The header line's fields.
    public static let header = [
        "design", "consumer", "bytes_moved", "seconds", "mib_per_s", "peak_rss_bytes", "peak_buffered_bytes",
        "chunk_bytes", "cpu_seconds", "outcome",
    ]

    /// The whole CSV text: the reference runs (`cp`, `cat`, `dd`; consumer `-`), then `runs`.
    public static func csv(for runs: [BenchmarkRun], references: [ReferenceRun] = []) -> String {
        var rows = references.map { run in
            [run.command, "-", String(run.bytesMoved), format(run.seconds, digits: 4),
             run.mebibytesPerSecond.map { format($0, digits: 1) } ?? "", "", "",
             run.chunkBytes.map { String($0) } ?? "", format(run.cpuSeconds, digits: 6), BenchmarkOutcome.ok.description]
        }
        rows += runs.map { run in
            [run.design.rawValue, run.consumer.rawValue, String(run.bytesMoved), format(run.seconds, digits: 4),
             run.mebibytesPerSecond.map { format($0, digits: 1) } ?? "", String(run.peakResidentBytes),
             String(run.peakBufferedBytes), String(run.chunkBytes), format(run.cpuSeconds, digits: 6),
             run.outcome.description]
        }
        return ([header] + rows).map { $0.map(quote).joined(separator: ",") }.joined(separator: "\r\n") + "\r\n"
    }

    /// A field, quoted if RFC 4180 requires it.
    public static func quote(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) else {
            return field
        }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A number with a fixed count of decimals, without Foundation's locale.
    static func format(_ value: Double, digits: Int) -> String {
        guard value.isFinite else { return "0" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = Int64((abs(value) * scale).rounded())
        let whole = scaled / Int64(scale)
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard digits > 0 else { return sign + String(whole) }
        var fraction = String(scaled % Int64(scale))
        fraction = String(repeating: "0", count: digits - fraction.count) + fraction
        return sign + String(whole) + "." + fraction
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: Character(target), omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
