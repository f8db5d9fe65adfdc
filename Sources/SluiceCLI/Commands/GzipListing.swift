#if canImport(Glibc)
import Glibc
#endif
import Sluice

/// `sluice decompress -l` (and `sluice compress -l`): for each gzip file, its compressed size,
/// uncompressed size, ratio and output name, in the columns and words of gzip 1.12's `gzip -l`
/// (with `-v`, also its method, CRC-32, date and time), with a `(totals)` line for several files.
///
/// As gzip 1.12 does for `-l`, each file is decoded to its end (RFC 1952: every member, each
/// trailer checked), so the sizes are exact, past 4 GiB too. What is listed is gzip's:
/// - the compressed size is the whole file's; the uncompressed size and the CRC-32 are those of
///   the last member (`cat a.gz b.gz` lists `b`'s), its size counted, not its ISIZE;
/// - the ratio is `(uncompressed − (compressed − overhead)) / uncompressed`, `0.0%` for an empty
///   member, where the overhead is the first header and a trailer for a file of one member and
///   0 for several (as gzip computes it);
/// - the date and time are the `.gz` file's own modification time (local time, as `ctime(3)`);
///   standard input has none (the epoch).
/// A file that is not gzip, truncated or inconsistent is reported and the others are listed;
/// bytes after the last member are ignored with a warning, as `gzip -d` does.
struct GzipListing {
    /// One listed file.
    struct Row: Equatable {
        /// The bytes of the file, headers and trailers included.
        var compressed: Int64
        /// The bytes the last member decoded to (for the totals, the sum over the rows).
        var uncompressed: Int64
        /// The bytes gzip leaves out of the ratio: the first header and a trailer for a file of
        /// one member, 0 for several.
        var overhead: Int64
        /// The name a decompression would write: `x` for `x.gz`, `x.tar` for `x.tgz`.
        var name: String
        /// The last member's CRC-32 (`-lv`).
        var crc32: UInt32 = 0
        /// The file's modification time, in seconds since the epoch (`-lv`).
        var modified: Int = 0
        /// Whether this is the `(totals)` row, which has no method, CRC-32 or date.
        var isTotals = false
    }

    /// The width of the two size columns: the digits of the largest `off_t`, as gzip has it.
    static let columnWidth = 19

    /// The first line: the columns' names; with `-v`, gzip's four more before them.
    static func heading(verbose: Bool) -> String {
        (verbose ? "method  crc     date  time  " : "") + pad("compressed") + " " + pad("uncompressed")
            + "  ratio uncompressed_name"
    }

    /// Lists `sources` on standard output, decoding each on a thread of its own (never the
    /// cooperative pool); a source that cannot be listed is reported on standard error and the
    /// others are still listed.
    ///
    /// - Returns: the exit status: 1 if any source failed, else 2 if any had a warning, else 0.
    static func run(_ sources: [Pathname], verbose: Bool) async -> Int32 {
        await Task(executorPreference: BlockingIOExecutor(label: "sluice.list")) {
            await list(sources, verbose: verbose)
        }.value
    }

    private static func list(_ sources: [Pathname], verbose: Bool) async -> Int32 {
        var tally = OperandTally()
        var rows: [Row] = []
        for source in sources {
            let row: Row
            let warnings: [StageWarning]
            do {
                (row, warnings) = try await read(source)
            } catch {
                Console.message(error is GzipError ? "cannot list '\(source)': \(error)" : "\(error)")
                tally.fail()
                continue
            }
            if rows.isEmpty { Console.writeOutput(heading(verbose: verbose) + "\n") }
            rows.append(row)
            Console.writeOutput(line(row, verbose: verbose) + "\n")
            for warning in warnings {
                Console.message("list '\(source)': \(warning.message)")
                tally.warn()
            }
        }
        if sources.count > 1, let total = total(of: rows) {
            Console.writeOutput(line(total, verbose: verbose) + "\n")
        }
        return tally.status
    }

    /// A row as gzip prints it: with `verbose`, `defla`, the CRC-32 in 8 hex digits and the
    /// date as `ctime(3)` gives it (`Dec  1 16:43`), or spaces for the totals; the sizes
    /// right-aligned in their columns, the ratio as `%5.1f%%`, the name.
    static func line(_ row: Row, verbose: Bool = false) -> String {
        var text = ""
        if verbose {
            text = row.isTotals
                ? String(repeating: " ", count: 28)
                : "defla " + CRC32(value: row.crc32).description + " " + date(row.modified) + " "
        }
        let saved = row.uncompressed - (row.compressed - row.overhead)
        return text + pad("\(row.compressed)") + " " + pad("\(row.uncompressed)") + " " + ratio(saved, of: row.uncompressed)
            + " " + row.name
    }

    /// `Dec  1 16:43`: the month, the day and the time of `seconds` in local time, as the 12
    /// characters `ctime(3)` gives after the weekday.
    static func date(_ seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return String(repeating: "?", count: 12) }
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%b %e %H:%M", &parts)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The `(totals)` row: the sums, with the last row's overhead (as gzip computes it, so that
    /// one file's totals give its own ratio); `nil` when a sum is 0, where gzip prints none.
    static func total(of rows: [Row]) -> Row? {
        let compressed = rows.reduce(Int64(0)) { $0 + $1.compressed }
        let uncompressed = rows.reduce(Int64(0)) { $0 + $1.uncompressed }
        guard compressed > 0, uncompressed > 0, let last = rows.last else { return nil }
        return Row(compressed: compressed, uncompressed: uncompressed, overhead: last.overhead, name: "(totals)", isTotals: true)
    }

    /// `100 × part / whole` as C's `%5.1f%%` prints it (rounded by the C library, as gzip's),
    /// `0.0%` when `whole` is 0.
    static func ratio(_ part: Int64, of whole: Int64) -> String {
        String(printf: "%5.1f%%", whole == 0 ? 0 : 100 * Double(part) / Double(whole))
    }

    private static func pad(_ text: String) -> String {
        String(repeating: " ", count: max(0, columnWidth - text.count)) + text
    }
}
