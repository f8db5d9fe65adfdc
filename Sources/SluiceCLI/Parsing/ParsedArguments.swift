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
        case byteRange(Range<Int64>)
        case sizes([Int64])
        case integer(Int)
        case path(Pathname)
        case list([String])
        case duration(Duration)
    }

    /// The command the arguments are for: the one they were given to, or the one an option
    /// among them switches to (`compress -d` is `decompress`).
    let command: CommandName
    /// The operands, as bytes, in order.
    private(set) var operands: [Pathname] = []
    private var values: [String: Value] = [:]

    /// Reads `arguments` as `command` takes them, or as the command an option among them
    /// switches to (``command(of:given:table:)``).
    ///
    /// - Parameter table: the options to know; the whole table unless a test says otherwise.
    /// - Throws: ``UsageError`` for an option the command does not take, a refused option
    ///   (``CommandOption/refusal``), a missing value or a bad one.
    init(_ arguments: [[UInt8]], for command: CommandName, table: [CommandOption] = CommandOption.all) throws(UsageError) {
        let command = Self.command(of: arguments, given: command, table: table)
        self.command = command
        let options = table.filter { $0.commands.contains(command) }
        var scanner = ArgumentScanner(arguments)
        while let item = scanner.next() {
            switch item {
            case .operand(let path):
                operands.append(path)
            case .long(let name, let attached):
                guard let option = options.first(where: { $0.long == name }) else {
                    throw .withSuggestion(
                        UsageError.unknownOption("--\(name)").message, typed: name, candidates: options.map(\.long), prefix: "--")
                }
                try record(option, try option.read(spelled: "--\(name)", attached: attached, from: &scanner))
            case .short(let letter):
                guard let option = options.first(where: { $0.shortNames.contains(letter) }) else { throw .unknownOption("-\(letter)") }
                try record(option, try option.read(spelled: "-\(letter)", attached: nil, from: &scanner))
            case .number(let digits):
                guard let option = options.first(where: \.takesDigits) else { throw .unknownOption("-\(digits)") }
                try record(option, try option.read(digits: digits))
            }
        }
    }

    /// Keeps `value` as `option`'s, or as the value of the option it sets (`--fast`: `--level 1`).
    ///
    /// - Throws: ``UsageError`` with the option's ``CommandOption/refusal``, if it has one.
    private mutating func record(_ option: CommandOption, _ value: Value) throws(UsageError) {
        if let refusal = option.refusal { throw UsageError(refusal) }
        if let setting = option.setting {
            values[setting.option] = setting.value
        } else {
            values[option.long] = value
        }
    }

    /// The command `arguments` given to `command` are for: the command of the last option
    /// among them that ``CommandOption/switchesTo`` one, else `command`. Options are walked with
    /// their values (so `-o -d` names a file `-d`), as both commands would read them; a command
    /// line that does not parse stays `command`'s, whose parse reports the error.
    static func command(of arguments: [[UInt8]], given command: CommandName, table: [CommandOption] = CommandOption.all) -> CommandName {
        let switching = table.filter { $0.commands.contains(command) && $0.switchesTo != nil }
        guard !switching.isEmpty else { return command }
        let commands = Set(switching.compactMap(\.switchesTo)).union([command])
        let known = table.filter { !$0.commands.isDisjoint(with: commands) }
        var scanner = ArgumentScanner(arguments)
        var result = command
        while let item = scanner.next() {
            let found: (option: CommandOption, spelling: String, attached: String?)?
            switch item {
            case .operand, .number: found = nil
            case .long(let name, let attached): found = known.first { $0.long == name }.map { ($0, "--\(name)", attached) }
            case .short(let letter): found = known.first { $0.shortNames.contains(letter) }.map { ($0, "-\(letter)", nil) }
            }
            guard let found else { continue }
            guard (try? found.option.read(spelled: found.spelling, attached: found.attached, from: &scanner)) != nil else {
                return command
            }
            if let target = found.option.switchesTo, found.option.commands.contains(command) { result = target }
        }
        return result
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

    /// The value of a ``ValueKind/byteRange`` option.
    func byteRange(_ option: CommandOption) -> Range<Int64>? {
        if case .byteRange(let value)? = values[option.long] { value } else { nil }
    }

    /// The value of a ``ValueKind/sizes(_:)`` option: each size in bytes, in the order given.
    func sizes(_ option: CommandOption) -> [Int64]? {
        if case .sizes(let value)? = values[option.long] { value } else { nil }
    }

    /// The value of an ``ValueKind/integer(_:noun:)`` option.
    func integer(_ option: CommandOption) -> Int? {
        if case .integer(let value)? = values[option.long] { value } else { nil }
    }

    /// The value of a ``ValueKind/duration`` option.
    func duration(_ option: CommandOption) -> Duration? {
        if case .duration(let value)? = values[option.long] { value } else { nil }
    }

    /// The value of a ``ValueKind/path`` option.
    func path(_ option: CommandOption) -> Pathname? {
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
