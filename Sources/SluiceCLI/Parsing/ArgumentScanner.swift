import Sluice

/// Walks a command line's arguments as bytes: options are ASCII, operands keep every byte
/// (so a file name that is not UTF-8 reaches the system call unchanged).
///
/// Understands `--name value`, `--name=value`, clustered short flags (`-qf`), `-` as an operand
/// and `--` as the end of options.
struct ArgumentScanner {
    enum Item: Equatable {
        /// A long option without its leading `--`, with an attached `=value` if there was one.
        case long(String, attached: String?)
        /// One short option letter.
        case short(Character)
        /// A dash and digits only (`-6`, `-10`), kept whole: a compression level, never a cluster.
        case number(String)
        /// An operand, as bytes.
        case operand(Pathname)
    }

    private var arguments: [[UInt8]]
    private var index = 0
    private var pendingShorts: [Character] = []
    private var optionsEnded = false

    init(_ arguments: [[UInt8]]) {
        self.arguments = arguments
    }

    /// The next item, or `nil` at the end.
    mutating func next() -> Item? {
        if !pendingShorts.isEmpty { return .short(pendingShorts.removeFirst()) }
        guard index < arguments.count else { return nil }
        let argument = arguments[index]
        index += 1
        if optionsEnded || argument.first != UInt8(ascii: "-") || argument.count == 1 {
            return .operand(Pathname(bytes: argument))
        }
        if argument == Array("--".utf8) {
            optionsEnded = true
            return next()
        }
        let text = String(decoding: argument, as: UTF8.self)
        if text.hasPrefix("--") {
            let body = text.dropFirst(2)
            if let equals = body.firstIndex(of: "=") {
                return .long(String(body[..<equals]), attached: String(body[body.index(after: equals)...]))
            }
            return .long(String(body), attached: nil)
        }
        if text.dropFirst().allSatisfy(\.isASCII) && text.dropFirst().allSatisfy(\.isNumber) {
            return .number(String(text.dropFirst()))
        }
        pendingShorts = Array(text.dropFirst())
        return .short(pendingShorts.removeFirst())
    }

    /// The next argument as written, without taking it; `nil` at the end, in the middle of a
    /// cluster of short options, or after `--`.
    var upcoming: String? {
        guard pendingShorts.isEmpty, !optionsEnded, index < arguments.count else { return nil }
        return String(decoding: arguments[index], as: UTF8.self)
    }

    /// The value of an option that takes one: the attached `=value`, or the next argument.
    ///
    /// - Throws: ``UsageError`` when there is none.
    mutating func value(for option: String, attached: String?) throws(UsageError) -> String {
        if let attached { return attached }
        if !pendingShorts.isEmpty {
            defer { pendingShorts.removeAll() }
            return String(pendingShorts)
        }
        guard index < arguments.count else { throw UsageError("option '\(option)' needs a value") }
        index += 1
        return String(decoding: arguments[index - 1], as: UTF8.self)
    }
}
