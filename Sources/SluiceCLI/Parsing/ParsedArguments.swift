import Sluice

/// A command line read against the option table: the options given, with their values
/// checked, and the operands in order.
///
/// An option given twice keeps its last value (`--level 1 --level 9` is level 9), as
/// `cp` and `gzip` do.
struct ParsedArguments {
    /// The value of one option.
    enum Value: Equatable {
        /// A flag, or an ``CommandOption/Value/attached(choices:)`` option without its `=`.
        case present
        case choice(String)
        case size(Int64)
        case sizes([Int64])
        case integer(Int)
        case path(FilePath)
        case list([String])
    }

    /// The operands, as bytes, in order.
    private(set) var operands: [FilePath] = []
    private var values: [String: Value] = [:]

    /// Reads `arguments` as `command` takes them.
    ///
    /// - Parameter table: the options to know; the whole table unless a test says otherwise.
    /// - Throws: ``UsageError`` for an option `command` does not take, a missing value or a bad one.
    init(_ arguments: [[UInt8]], for command: CommandName, table: [CommandOption] = CommandOption.all) throws(UsageError) {
        let options = table.filter { $0.commands.contains(command) }
        var scanner = ArgumentScanner(arguments)
        while let item = scanner.next() {
            switch item {
            case .operand(let path):
                operands.append(path)
            case .long(let name, let attached):
                guard let option = options.first(where: { $0.long == name }) else { throw .unknownOption("--\(name)") }
                values[option.long] = try option.read(spelled: "--\(name)", attached: attached, from: &scanner)
            case .short(let letter):
                guard let option = options.first(where: { $0.short == letter }) else { throw .unknownOption("-\(letter)") }
                values[option.long] = try option.read(spelled: "-\(letter)", attached: nil, from: &scanner)
            case .number(let digits):
                guard let option = options.first(where: \.takesDigits) else { throw .unknownOption("-\(digits)") }
                values[option.long] = try option.read(digits: digits)
            }
        }
    }

    /// Whether `option` was given.
    func has(_ option: CommandOption) -> Bool {
        values[option.long] != nil
    }

    /// The value attached to an ``CommandOption/Value/attached(choices:)`` option (`json` for
    /// `--progress=json`); `nil` when it was given without one, or not at all.
    func choice(_ option: CommandOption) -> String? {
        if case .choice(let value)? = values[option.long] { value } else { nil }
    }

    /// The value of a ``ValueKind/size(_:)`` option, in bytes.
    func size(_ option: CommandOption) -> Int64? {
        if case .size(let value)? = values[option.long] { value } else { nil }
    }

    /// The value of a ``ValueKind/sizes(_:)`` option: each size in bytes, in the order given.
    func sizes(_ option: CommandOption) -> [Int64]? {
        if case .sizes(let value)? = values[option.long] { value } else { nil }
    }

    /// The value of an ``ValueKind/integer(_:noun:)`` option.
    func integer(_ option: CommandOption) -> Int? {
        if case .integer(let value)? = values[option.long] { value } else { nil }
    }

    /// The value of a ``ValueKind/path`` option.
    func path(_ option: CommandOption) -> FilePath? {
        if case .path(let value)? = values[option.long] { value } else { nil }
    }

    /// The value of a ``ValueKind/list(choices:)`` option.
    func list(_ option: CommandOption) -> [String]? {
        if case .list(let value)? = values[option.long] { value } else { nil }
    }
}

extension CommandOption {
    /// The value of this option, written `spelling`, taking it from `attached` or the scanner.
    ///
    /// - Throws: ``UsageError`` for a value given to a flag, a missing or bad value, or an
    ///   attached-only choice written as the next argument (`--progress json`, which would
    ///   otherwise read a file named `json`).
    fileprivate func read(
        spelled spelling: String, attached: String?, from scanner: inout ArgumentScanner
    ) throws(UsageError) -> ParsedArguments.Value {
        switch value {
        case .none:
            guard attached == nil else { throw UsageError("option '\(spelling)' takes no value") }
            return .present
        case .attached(let choices):
            guard let attached else {
                if let upcoming = scanner.upcoming, choices.contains(upcoming) {
                    throw UsageError(
                        "\(spelling) takes its value after '=': write \(spelling)=\(upcoming) "
                            + "(a file named \(upcoming): ./\(upcoming))")
                }
                return .present
            }
            guard choices.contains(attached) else {
                let forms = choices.map { "\(spelling)=\($0)" }.joined(separator: ", or ")
                throw UsageError("invalid value '\(attached)' for \(spelling) (\(spelling) alone, or \(forms))")
            }
            return .choice(attached)
        case .required(_, let kind):
            return try kind.parse(try scanner.value(for: spelling, attached: attached), option: spelling)
        }
    }

    /// The value of `-N` for an option that ``takesDigits``.
    ///
    /// - Throws: ``UsageError`` when N is outside the option's range (`-0`, `-10`).
    fileprivate func read(digits: String) throws(UsageError) -> ParsedArguments.Value {
        guard case .required(_, .integer(let range, let noun)) = value else { throw .unknownOption("-\(digits)") }
        guard let number = Int(digits), range.contains(number) else {
            throw UsageError("invalid \(noun) -\(digits) (expected -\(range.lowerBound) ... -\(range.upperBound))")
        }
        return .integer(number)
    }
}
