import Sluice

/// The `--verbose` report of a transfer: `'SRC' -> 'DST'` and the summary line.
extension Transfer {
    /// The `--verbose` report of a file done: `'SRC' -> 'DST'`, as `cp -v` prints it (on
    /// standard error: standard output may carry data), then the summary line.
    func reportVerbosely(_ report: CopyReport, options: CommonOptions) {
        let written: Pathname? = switch destination {
        case .file(let path): path
        case .descriptor(_, let name): name
        case .discard: nil
        }
        if let written { Console.writeError(Self.arrowLine(from: source.name.description, to: written.description)) }
        Console.message(describe(report, options: options))
    }

    /// `'SRC' -> 'DST'` and a newline, as `cp -v` prints a file copied.
    static func arrowLine(from source: String, to destination: String) -> String {
        "'\(source)' -> '\(destination)'\n"
    }

    func describe(_ report: CopyReport, options: CommonOptions) -> String {
        var text = "\(verb) '\(source.name)'"
        switch destination {
        case .file(let path): text += " to '\(path)'"
        case .descriptor(_, let name): text += name == "-" ? " to standard output" : " to '\(name)'"
        case .discard: break
        }
        if let range {
            // What the copy read is the range's decoded bytes, not the file's.
            text += ": \(report.bytesWritten) bytes written, the range \(range.bytes.lowerBound):\(range.bytes.upperBound) of its data"
        } else {
            // `--test` writes nothing: what it counts is the data decoded and verified.
            text += ": \(report.bytesRead) bytes read, \(report.bytesWritten) bytes " + (destination == .discard ? "decoded" : "written")
        }
        if let threads = compressionThreads {
            // The compressed size against the input's, as gzip -v and pigz -v report it.
            let ratio = report.bytesRead > 0 ? 100 * Double(report.bytesWritten) / Double(report.bytesRead) : 0
            text += " (\(format1(ratio))% of the input, \(threads.counted("thread")))"
        }
        if verb == "copy" {
            // The path, what gave way to it, and why a copy the kernel made has no CRC-32.
            text += ", by \(report.method)"
            var reasons = report.refusals.map(\.description)
            if options.rateLimit != nil, case .file = source, case .file = destination {
                reasons.append("--limit-rate: a kernel copy cannot be paced")
            }
            if !reasons.isEmpty { text += " (" + reasons.joined(separator: "; ") + ")" }
            if report.crc32 == nil && !report.method.passesThroughUserSpace {
                text += ", no CRC-32 (the data did not pass through sluice)"
            }
        }
        if let crc = report.crc32 { text += ", CRC-32 " + CRC32(value: crc).description }
        switch report.verification {
        case .verified where report.method == .kernelCopy:
            text += ", verified (the source read a second time for its CRC-32)"
        case .verified: text += ", verified"
        case .sharedExtents: text += ", not read back (clone, shared extents)"
        case .notVerified, nil: break
        }
        if let limit = options.rateLimit {
            text += ", read at most " + ProgressDisplay.formatBytes(limit.bytesPerSecond) + "/s"
        }
        text += ", " + format3(report.duration.inSeconds) + " s"
        text += " (" + ProgressDisplay.formatBytes(Int64(report.bytesPerSecond)) + "/s)"
        return text
    }

    private func format1(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    private func format3(_ value: Double) -> String {
        let thousandths = Int((value * 1000).rounded())
        let fraction = thousandths % 1000
        return "\(thousandths / 1000)." + (fraction < 10 ? "00" : fraction < 100 ? "0" : "") + "\(fraction)"
    }
}
