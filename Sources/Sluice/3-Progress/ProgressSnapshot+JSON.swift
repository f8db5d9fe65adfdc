extension ProgressSnapshot {
    /// The snapshot as one line of JSON (RFC 8259), as printed by `sluice --progress=json`.
    ///
    /// Keys come in this fixed order, with no whitespace between tokens:
    /// `bytesCompleted`, `bytesWritten`, `totalBytes` (`null` when unknown), `fraction` (`null`
    /// when unknown), `elapsedSeconds`, `bytesPerSecond`, `bufferedBytes`, `peakBufferedBytes`,
    /// `producerSuspendedSeconds`, `bytesCommitted`, `filesCommitted`; for an operation over many files (``files``), then
    /// `filesCompleted`, `filesFailed`, `totalFiles`, `totalGrowing`, and for a snapshot about one
    /// file `fileIndex` and `file` (the path as the user named it, its bytes as a name: see
    /// below), with `fileError` when that
    /// file failed; then `"done":true` on the last line, and `"error":"…"` when the
    /// operation failed.
    ///
    /// ```
    /// {"bytesCompleted":1048576,"bytesWritten":1048576,"totalBytes":4194304,"fraction":0.25,"elapsedSeconds":0.5,"bytesPerSecond":2097152.0,"bufferedBytes":0,"peakBufferedBytes":2097152,"producerSuspendedSeconds":0.0,"bytesCommitted":0,"filesCommitted":0}
    /// ```
    ///
    /// Numbers are always finite: a NaN or infinite `Double` field (only possible in a snapshot
    /// made with ``init(bytesCompleted:bytesWritten:totalBytes:fraction:elapsed:bytesPerSecond:bufferedBytes:peakBufferedBytes:producerSuspended:isFinal:)``) is written as `0`. Strings escape `"` and `\`, and
    /// control characters (U+0000...U+001F) as `\uXXXX`; other characters, non-ASCII included,
    /// are written as UTF-8. In `file`, a byte of the name that is not part of valid UTF-8 is
    /// `\udcXX`, as Python's `surrogateescape` decodes it (PEP 383): `json.loads` then
    /// `os.fsencode` give back the name's exact bytes.
    ///
    /// - Parameters:
    ///   - done: whether to add `"done":true` (the operation's last line).
    ///   - error: a message for a failed or interrupted operation; when not `nil`, adds
    ///     `"error":"<message>"`, implies `done`, and writes a `fraction` of 1 as `0.999` (an
    ///     operation that did not complete never reads as complete).
    /// - Returns: the JSON object, without a trailing newline.
    package func jsonLine(done: Bool = false, error: String? = nil) -> String {
        var out = "{"
        out.reserveCapacity(256)
        out += "\"bytesCompleted\":\(bytesCompleted)"
        out += ",\"bytesWritten\":\(bytesWritten)"
        out += ",\"totalBytes\":" + (totalBytes.map { String($0) } ?? "null")
        // A line that reports a failure never reads as complete.
        let shown = error == nil ? fraction : fraction.map { min($0, 0.999) }
        out += ",\"fraction\":" + (shown.map(Self.jsonNumber) ?? "null")
        out += ",\"elapsedSeconds\":" + Self.jsonNumber(elapsed.sluiceSeconds)
        out += ",\"bytesPerSecond\":" + Self.jsonNumber(bytesPerSecond)
        out += ",\"bufferedBytes\":\(bufferedBytes)"
        out += ",\"peakBufferedBytes\":\(peakBufferedBytes)"
        out += ",\"producerSuspendedSeconds\":" + Self.jsonNumber(producerSuspended.sluiceSeconds)
        out += ",\"bytesCommitted\":\(bytesCommitted),\"filesCommitted\":\(filesCommitted)"
        if let files { appendFiles(files, to: &out) }
        if done || error != nil {
            out += ",\"done\":true"
        }
        if let error {
            out += ",\"error\":"
            Self.appendJSONString(error, to: &out)
        }
        out += "}"
        return out
    }

    /// A finite `Double` in JSON number syntax; NaN and infinities become `0`.
    ///
    /// Swift's shortest round-trip `description` (`0.25`, `1.0`, `1e-05`, `1e+20`) is valid JSON
    /// for every finite value.
    package static func jsonNumber(_ value: Double) -> String {
        value.isFinite ? value.description : "0"
    }

    /// Appends `string` as a quoted JSON string (RFC 8259 §7).
    package static func appendJSONString(_ string: String, to out: inout String) {
        out += "\""
        for scalar in string.unicodeScalars { appendEscaped(scalar, to: &out) }
        out += "\""
    }

    /// Appends a name given as bytes as a quoted JSON string: its valid UTF-8 as characters
    /// (escaped as ``appendJSONString(_:to:)`` escapes them), and each byte that is not part of
    /// valid UTF-8 as `\udcXX`, the lone low surrogate of Python's `surrogateescape` error
    /// handler (PEP 383), so that `os.fsencode(json.loads(line)["file"])` gives back the
    /// exact bytes.
    internal static func appendJSONString(bytes: [UInt8], to out: inout String) {
        out += "\""
        var index = 0
        while index < bytes.count {
            if let (scalar, length) = scalar(in: bytes, at: index) {
                appendEscaped(scalar, to: &out)
                index += length
            } else {
                out += "\\udc" + String(bytes[index], radix: 16)
                index += 1
            }
        }
        out += "\""
    }

    /// The Unicode scalar whose well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates,
    /// nothing above U+10FFFF) starts at `index`, and its length; `nil` where none does.
    private static func scalar(in bytes: [UInt8], at index: Int) -> (Unicode.Scalar, Int)? {
        let lead = bytes[index]
        let (length, minimum, initial): (Int, UInt32, UInt32) = switch lead {
        case 0x00...0x7F: (1, 0, UInt32(lead))
        case 0xC2...0xDF: (2, 0x80, UInt32(lead & 0x1F))
        case 0xE0...0xEF: (3, 0x800, UInt32(lead & 0x0F))
        case 0xF0...0xF4: (4, 0x10000, UInt32(lead & 0x07))
        default: (0, 0, 0)
        }
        guard length > 0, index + length <= bytes.count else { return nil }
        var value = initial
        for next in bytes[(index + 1)..<(index + length)] {
            guard next & 0xC0 == 0x80 else { return nil }
            value = value << 6 | UInt32(next & 0x3F)
        }
        guard value >= minimum, let scalar = Unicode.Scalar(value) else { return nil }
        return (scalar, length)
    }

    /// Appends one scalar of a JSON string: `"` and `\` escaped, control characters as
    /// `\uXXXX`, the rest as it is.
    private static func appendEscaped(_ scalar: Unicode.Scalar, to out: inout String) {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\u{0}"..."\u{1F}":
            let hex = String(scalar.value, radix: 16, uppercase: true)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default:
            out.unicodeScalars.append(scalar)
        }
    }

    /// The keys of ``ProgressSnapshot/FileCounts``, in their fixed order.
    private func appendFiles(_ files: ProgressSnapshot.FileCounts, to out: inout String) {
        out += ",\"filesCompleted\":\(files.completed),\"filesFailed\":\(files.failed)"
        out += ",\"totalFiles\":\(files.total),\"totalGrowing\":\(files.isTotalGrowing)"
        if let index = files.currentIndex { out += ",\"fileIndex\":\(index)" }
        if let current = files.current {
            out += ",\"file\":"
            Self.appendJSONString(bytes: current.bytes, to: &out)
        }
        if let error = files.currentError {
            out += ",\"fileError\":"
            Self.appendJSONString(error, to: &out)
        }
    }
}
