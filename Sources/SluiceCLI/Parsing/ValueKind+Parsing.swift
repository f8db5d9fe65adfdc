import Sluice

extension ValueKind {
    /// Reads and checks the value `text` given to the option spelled `option`.
    ///
    /// - Throws: ``UsageError`` naming the option and what it expects, when `text` is not of
    ///   this kind or is out of range.
    func parse(_ text: String, option: String) throws(UsageError) -> ParsedArguments.Value {
        switch self {
        case .size(let range):
            return .size(try Self.parseSize(text, within: range, option: option))
        case .rate(let range):
            let rate: Int64
            do {
                rate = try Self.parseSize(text, option: option)
            } catch {
                // A number past Int64, or one its unit takes past it, is a rate, too large.
                let digits = text.prefix { $0.isASCII && $0.isNumber }
                if error.message.hasSuffix("is too large") || (!digits.isEmpty && Int64(digits) == nil) {
                    throw UsageError("rate '\(text)' for \(option) is too large: at most \(Self.describe(range.upperBound)) per second")
                }
                throw UsageError("invalid rate '\(text)' for \(option) (bytes per second, with an optional unit: 100K, 50M)")
            }
            guard range.contains(rate) else {
                throw UsageError("\(option) is a rate: at least \(Self.describe(range.lowerBound)) per second")
            }
            return .size(rate)
        case .kibibytes(let range):
            // A bare number counts KiB (`pigz -b 128`); one too large for that is past any range.
            let size: Int64
            if !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) {
                let (product, overflow) = (Int64(text) ?? .max).multipliedReportingOverflow(by: 1024)
                size = overflow ? .max : product
            } else {
                size = try Self.parseSize(text, option: option)
            }
            return .size(try Self.check(size, within: range.lowerBound * 1024...range.upperBound * 1024, option: option))
        case .sizes(let range):
            guard !text.isEmpty else { throw UsageError("\(option) needs at least one value") }
            var sizes: [Int64] = []
            for item in text.split(separator: ",", omittingEmptySubsequences: false) {
                sizes.append(try Self.parseSize(String(item), within: range, option: option))
            }
            return .sizes(sizes)
        case .byteRange:
            return .byteRange(try Self.parseRange(text, option: option))
        case .integer(let range, let noun):
            guard let number = Int(text), range.contains(number) else {
                throw UsageError("invalid value '\(text)' for \(option) (expected a \(noun), \(Self.describe(range)))")
            }
            return .integer(number)
        case .duration:
            return .duration(try Self.parseDuration(text, option: option))
        case .path:
            return .path(Pathname(text))
        case .list(let choices):
            return .list(try Self.parseList(text, choices: choices, option: option))
        case .choice(let choices):
            guard choices.contains(text) else {
                throw UsageError("unknown value '\(text)' for \(option) (expected \(choices.joined(separator: " or ")))")
            }
            return .choice(text)
        }
    }

    /// A number with an optional unit (`ms`, `s`, `m`, `h`; none is seconds), at most 100 days.
    ///
    /// - Throws: ``UsageError`` for anything else, or a negative or larger time.
    private static func parseDuration(_ text: String, option: String) throws(UsageError) -> Duration {
        let number = text.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        let scale: Double? =
            switch text.dropFirst(number.count) {
            case "ms": 0.001
            case "", "s": 1
            case "m": 60
            case "h": 3600
            default: nil
            }
        guard let scale, let value = Double(number), (value * scale).isFinite, value * scale <= 8_640_000 else {
            throw UsageError("invalid duration '\(text)' for \(option) (a number and a unit: 500ms, 2s, 1m)")
        }
        return .milliseconds(Int64((value * scale * 1000).rounded()))
    }

    /// `START:END`, two sizes as ``parseSize(_:option:)`` reads them, either left out (0, the end).
    ///
    /// - Throws: ``UsageError`` for no colon, a bound that is not a size, or an end before the start.
    private static func parseRange(_ text: String, option: String) throws(UsageError) -> Range<Int64> {
        let bounds = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2 else {
            throw UsageError("invalid range '\(text)' for \(option) (START:END in bytes, END exclusive: 0:1M, 512M:, :4096)")
        }
        let start = bounds[0].isEmpty ? 0 : try parseSize(String(bounds[0]), option: option)
        let end = bounds[1].isEmpty ? Int64.max : try parseSize(String(bounds[1]), option: option)
        guard start <= end else { throw UsageError("the range '\(text)' for \(option) ends before it starts") }
        return start..<end
    }

    /// A size as ``parseSize(_:option:)`` reads it, within `range`.
    ///
    /// - Throws: ``UsageError`` for a value that is not a size, or is out of range.
    private static func parseSize(_ text: String, within range: ClosedRange<Int64>, option: String) throws(UsageError) -> Int64 {
        try check(try parseSize(text, option: option), within: range, option: option)
    }

    /// `size`, when it is within `range`.
    ///
    /// - Throws: ``UsageError`` saying which bound it crosses.
    private static func check(_ size: Int64, within range: ClosedRange<Int64>, option: String) throws(UsageError) -> Int64 {
        guard size >= range.lowerBound else { throw UsageError("\(option) must be at least \(describe(range.lowerBound))") }
        guard size <= range.upperBound else { throw UsageError("\(option) must be at most \(describe(range.upperBound))") }
        return size
    }

    /// Parses a size with an optional unit, in either case: `4096`, `256K` or `256KiB` (KiB),
    /// `1M`/`1MiB`, `2G`/`2GiB`, `1T`/`1TiB`, binary; `KB`, `MB`, `GB`, `TB` decimal (1,000,
    /// 1,000,000, ...), as `dd` reads them; a trailing `B` alone is bytes.
    ///
    /// - Throws: ``UsageError`` for anything else, or a value that overflows `Int64`.
    static func parseSize(_ text: String, option: String) throws(UsageError) -> Int64 {
        var digits = Substring(text)
        var multiplier: Int64 = 1
        let units: [(String, Int64)] = [
            ("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("TiB", 1 << 40),
            ("KB", 1_000), ("MB", 1_000_000), ("GB", 1_000_000_000), ("TB", 1_000_000_000_000),
            ("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30), ("T", 1 << 40), ("B", 1),
        ]
        for (suffix, value) in units where digits.uppercased().hasSuffix(suffix.uppercased()) {
            digits = digits.dropLast(suffix.count)
            multiplier = value
            break
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let number = Int64(digits), number >= 0 else {
            throw UsageError(
                "invalid size '\(text)' for \(option) (a count of bytes with an optional unit: 4096, 256K, 1M, 1MiB; "
                    + "KB, MB, GB are decimal)")
        }
        let (product, overflow) = number.multipliedReportingOverflow(by: multiplier)
        guard !overflow else { throw UsageError("size '\(text)' for \(option) is too large") }
        return product
    }

    /// The comma-separated `text` as a list of `choices`, in the order given.
    ///
    /// - Throws: ``UsageError`` for a name that is not a choice, or an empty list.
    private static func parseList(_ text: String, choices: [String], option: String) throws(UsageError) -> [String] {
        let names = text.split(separator: ",").map(String.init)
        if let unknown = names.first(where: { !choices.contains($0) }) {
            throw UsageError("unknown value '\(unknown)' for \(option) (expected \(choices.joined(separator: ", ")))")
        }
        guard !names.isEmpty else { throw UsageError("\(option) needs at least one value") }
        return names
    }

    /// A size as a message or the help gives it: `1 byte`, `1K`, `256K`, `1M`, `1G` (the largest
    /// binary unit that divides it), else a count of bytes.
    static func describe(_ size: Int64) -> String {
        if size == 1 { return "1 byte" }
        for (unit, shift) in [("G", Int64(30)), ("M", 20), ("K", 10)] where size > 0 && size % (1 << shift) == 0 {
            return "\(size >> shift)\(unit)"
        }
        return "\(size) bytes"
    }

    /// A range as a message gives it: `1...9`, or `at least 1` when it has no upper bound.
    private static func describe(_ range: ClosedRange<Int>) -> String {
        range.upperBound == Int.max ? "at least \(range.lowerBound)" : "\(range.lowerBound)...\(range.upperBound)"
    }
}
