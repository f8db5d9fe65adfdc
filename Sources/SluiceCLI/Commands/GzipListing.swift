import Sluice

/// `sluice decompress -l` (and `sluice compress -l`): for each gzip file, its compressed size,
/// uncompressed size, ratio and output name, in the columns and words of `gzip -l`, with a
/// `(totals)` line for several files.
///
/// Nothing is decoded: as `gzip -l`, the listing reads the first member's header and the last
/// 8 bytes of the input, the trailer of its last member (RFC 1952 §2.3.1: CRC32, ISIZE). So:
/// - the uncompressed size is that member's ISIZE, the size of its data modulo 2^32: a file of
///   several members (`cat a.gz b.gz`) shows its whole compressed size and the last member's
///   ISIZE, as `gzip -l` does;
/// - a size is marked `*` when the data could decompress to more, by a multiple of 4 GiB: deflate
///   codes at most 1032 bytes per compressed byte (a 258-byte match in two 1-bit codes, RFC 1951
///   §3.2.5), so data of D compressed bytes (the file less the header and trailer) decodes to at
///   most 1032 × D bytes, and the size may be ISIZE + k × 2^32 (k ≥ 1) whenever
///   ISIZE + 2^32 ≤ 1032 × D. The rule never misses a wrapped size; below about 4 MiB of
///   compressed data it marks none. `sluice decompress -t -v` decodes the data and counts it.
///
/// The ratio is gzip's: `(ISIZE − D) / ISIZE`, `0.0%` for an empty member. A regular file's
/// trailer is read with `pread(2)` at its end; standard input or a FIFO is read to its end.
struct GzipListing {
    /// One listed file.
    struct Row: Equatable {
        /// The bytes of the file, headers and trailers included.
        var compressed: Int64
        /// The ISIZE of the last member: the size of its data modulo 2^32 (for the totals,
        /// the sum of the ISIZEs).
        var uncompressed: Int64
        /// The first member's header and the 8 bytes of a trailer: the bytes gzip leaves out of
        /// the ratio.
        var overhead: Int64
        /// The name a decompression would write: `x` for `x.gz`, `x.tar` for `x.tgz`.
        var name: String

        /// Whether the data could decode to ISIZE + k × 2^32 bytes (k ≥ 1): the rule above.
        var mayExceedISIZE: Bool {
            let (limit, overflow) = max(0, compressed - overhead).multipliedReportingOverflow(by: 1032)
            return overflow || uncompressed + (1 << 32) <= limit
        }
    }

    /// The width of the two size columns: the digits of the largest `off_t`, as gzip has it.
    static let columnWidth = 19

    /// The first line: the columns' names.
    static let heading = pad("compressed") + " " + pad("uncompressed") + "  ratio uncompressed_name"

    /// What standard error says once when a size is marked.
    static let note =
        "* the size is ISIZE, stored modulo 4 GiB (RFC 1952): the data may decode to more, by a multiple of "
        + "4 GiB (sluice decompress -t -v decodes and counts it)"

    /// Lists `sources` on standard output; a source that cannot be listed is reported on
    /// standard error and the others are still listed.
    ///
    /// - Returns: the exit status: 1 if any source failed, else 0.
    static func run(_ sources: [FilePath], quiet: Bool) -> Int32 {
        var tally = OperandTally()
        var rows: [Row] = []
        for source in sources {
            let row: Row
            do {
                row = try read(source)
            } catch {
                Console.message(error is GzipError ? "cannot list '\(source)': \(error)" : "\(error)")
                tally.fail()
                continue
            }
            if rows.isEmpty { Console.writeOutput(heading + "\n") }
            rows.append(row)
            Console.writeOutput(line(row) + "\n")
        }
        if sources.count > 1, let total = total(of: rows) {
            Console.writeOutput(line(total, marked: rows.contains(where: \.mayExceedISIZE)) + "\n")
        }
        if !quiet && rows.contains(where: \.mayExceedISIZE) { Console.message(note) }
        return tally.status
    }

    /// A row as gzip prints it: the sizes right-aligned in their columns, the ratio as `%5.1f%%`,
    /// the name; a marked size ends in `*`, in the same column.
    static func line(_ row: Row, marked: Bool? = nil) -> String {
        let mark = marked ?? row.mayExceedISIZE
        let uncompressed = mark ? String(pad("\(row.uncompressed)").dropFirst()) + "*" : pad("\(row.uncompressed)")
        let saved = row.uncompressed - (row.compressed - row.overhead)
        return pad("\(row.compressed)") + " " + uncompressed + " " + ratio(saved, of: row.uncompressed) + " "
            + row.name
    }

    /// The `(totals)` row: the sums, with the last row's overhead (as gzip computes it, so that
    /// one file's totals give its own ratio); `nil` when a sum is 0, where gzip prints none.
    static func total(of rows: [Row]) -> Row? {
        let compressed = rows.reduce(Int64(0)) { $0 + $1.compressed }
        let uncompressed = rows.reduce(Int64(0)) { $0 + $1.uncompressed }
        guard compressed > 0, uncompressed > 0, let last = rows.last else { return nil }
        return Row(compressed: compressed, uncompressed: uncompressed, overhead: last.overhead, name: "(totals)")
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
