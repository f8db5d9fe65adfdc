/// One option of the command line, declared once in the option table
/// (`CommandOption+Table.swift`): its spellings, the value it takes, its help and the commands
/// that take it. The parser (``ParsedArguments``) and the help (``HelpText``) both read it, so
/// an option is never spelled twice.
struct CommandOption: Sendable {
    /// What follows the option's name.
    enum Value: Sendable {
        /// Nothing: the option is a flag.
        case none
        /// Nothing, or one of `choices` attached with `=` (`--progress`, `--progress=json`);
        /// never the next argument, which stays an operand.
        case attached(choices: [String])
        /// A value, attached (`--name=value`, `-ovalue`) or as the next argument, shown in the
        /// help as `<name>`.
        case required(name: String, kind: ValueKind)
    }

    /// The long name without its `--`; it also identifies the option among the parsed values.
    let long: String
    /// The short name without its `-`, if the option has one.
    let short: Character?
    /// A second short name, if the option has one (`-R` beside `-r`, as cp).
    let alternateShort: Character?
    /// Whether a dash and digits (`-9`) give the option that number as its value, as in
    /// `gzip -9`; only for an option whose value is an ``ValueKind/integer(_:noun:)``.
    let takesDigits: Bool
    let value: Value
    /// What the option does, in one paragraph with no line breaks, without its default.
    let summary: String
    /// What the command does when the option is not given, spelled from the value the command
    /// uses (`6`, `256K`, `the processors sluice may run on`); `nil` for a flag and for an option
    /// whose summary says what its absence means.
    let defaultValue: String?
    /// The commands that take the option; any other answers "unknown option".
    let commands: Set<CommandName>
    /// Another option and the value this one gives it (`--fast` is `--level 1`): the parser
    /// records that value under the other option's name, so the last of them given wins.
    let setting: (option: String, value: ParsedArguments.Value)?
    /// The command the option turns the command line into (`sluice compress -d` is
    /// `sluice decompress`, as `gzip -d` is `gunzip`); see ``ParsedArguments/command(of:given:table:)``.
    let switchesTo: CommandName?
    /// Why the option is refused (a usage error with this message, exit 64): an option of
    /// `gzip` that Sluice knows and does not do. Such an option is not listed in the help, the
    /// completions or the manual.
    let refusal: String?

    init(
        long: String, short: Character? = nil, alternateShort: Character? = nil, takesDigits: Bool = false, value: Value = .none, abstract: String,
        defaultValue: String? = nil, commands: Set<CommandName>, setting: (option: String, value: ParsedArguments.Value)? = nil,
        switchesTo: CommandName? = nil, refusal: String? = nil
    ) {
        self.long = long
        self.short = short
        self.alternateShort = alternateShort
        self.takesDigits = takesDigits
        self.value = value
        self.summary = abstract
        self.defaultValue = defaultValue
        self.commands = commands
        self.setting = setting
        self.switchesTo = switchesTo
        self.refusal = refusal
    }

    /// What the help, the completions and the manual say of the option: its summary, then its
    /// default, `(default: 6)`, so that each default is written once, beside the option.
    var abstract: String {
        guard let defaultValue else { return summary }
        return summary + " (default: " + defaultValue + ")"
    }

    /// Whether the help, the completions and the manual list the option: every option but a
    /// refused one.
    var isListed: Bool { refusal == nil }

    /// The option's short names: ``short``, then ``alternateShort``.
    var shortNames: [Character] { [short, alternateShort].compactMap { $0 } }

    /// The options of `command` that the help, the completions and the manual list, in the
    /// table's order.
    static func listed(for command: CommandName) -> [CommandOption] {
        all.filter { $0.commands.contains(command) && $0.isListed }
    }

    /// The option's column in the help: `-o, --output <dst>`, `-1 ... -9, --level <n>`,
    /// `--progress[=json]`.
    var label: String {
        var names: [String] = []
        if takesDigits, case .required(_, .integer(let range, _)) = value {
            names.append("-\(range.lowerBound) ... -\(range.upperBound)")
        }
        if let short { names.append("-\(short)") }
        if let alternateShort { names.append("-\(alternateShort)") }
        switch value {
        case .none: names.append("--\(long)")
        case .attached(let choices): names.append("--\(long)[=\(choices.joined(separator: "|"))]")
        case .required(let name, _): names.append("--\(long) <\(name)>")
        }
        return names.joined(separator: ", ")
    }
}

/// The kind of value an option takes: how it is read and checked, and what a bad one is told.
enum ValueKind: Sendable {
    /// A count of bytes with an optional binary unit (`4096`, `256K`, `1M`, `2G`), within the
    /// range.
    case size(ClosedRange<Int64>)
    /// A rate in bytes per second, written as ``size(_:)`` takes a size (`100K`, `50M`),
    /// within the range; messages say it is a rate.
    case rate(ClosedRange<Int64>)
    /// A size as ``size(_:)`` takes it, except that a bare number counts KiB (`128` is 128 KiB,
    /// as `pigz -b` reads it), within the range given in KiB.
    case kibibytes(ClosedRange<Int64>)
    /// One or more sizes as ``size(_:)`` takes them, separated by commas (`4K,64K,1M`), each
    /// within the range.
    case sizes(ClosedRange<Int64>)
    /// Two byte offsets `START:END` (END exclusive), each a size as ``size(_:)`` takes it:
    /// `START` omitted is 0, `END` omitted is the end (`:1M`, `512M:`, `100:200`).
    case byteRange
    /// A decimal integer within the range; `noun` names it in messages ("count of chunks").
    case integer(ClosedRange<Int>, noun: String)
    /// A length of time: a decimal number with a unit, `ms`, `s`, `m` or `h` (`500ms`, `2s`,
    /// `1.5m`); a bare number counts seconds.
    case duration
    /// A file name.
    case path
    /// One or more of `choices`, separated by commas.
    case list(choices: [String])
    /// Exactly one of `choices`.
    case choice([String])
}
