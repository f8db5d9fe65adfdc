/// Writes benchmark runs as CSV (RFC 4180): a header line, then one row per counted run, CRLF
/// line endings, fields quoted when they hold a comma, a quote, CR or LF (quotes doubled).
public enum CSVWriter {
    /// The header line's fields.
    public static let header = [
        "design", "consumer", "input_bytes", "seconds", "mib_per_s", "peak_rss_bytes", "peak_buffered_bytes", "outcome",
    ]

    /// The whole CSV text for `runs`.
    public static func csv(for runs: [BenchmarkRun]) -> String {
        var lines = [header.map(quote).joined(separator: ",")]
        for run in runs {
            let fields = [
                run.design.rawValue, run.consumer.rawValue, String(run.inputBytes), format(run.seconds, digits: 4),
                format(run.mebibytesPerSecond, digits: 1), String(run.peakResidentBytes), String(run.peakBufferedBytes),
                run.outcome.description,
            ]
            lines.append(fields.map(quote).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
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
