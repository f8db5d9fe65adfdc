/// A command's help, in swift-argument-parser's layout: OVERVIEW (then the discussion), USAGE,
/// ARGUMENTS, OPTIONS and, for the top level, SUBCOMMANDS; wrapped at ``width`` columns, with
/// labels in a column of ``labelColumn`` and their text beside them. Also the lines of a usage
/// error, which name the same usage.
///
/// The options come from the option table (``CommandOption/all``): those that name ``command``.
struct HelpText {
    /// One row of a section: a label on the left, its text wrapped beside it.
    struct Row {
        var label: String
        var abstract: String
    }

    /// The width every line of the help fits in, in columns.
    static let width = 80
    /// The column where the text of a row starts (a longer label puts it on the next line).
    static let labelColumn = 26

    var command: CommandName
    /// One sentence: what the command does.
    var overview: String
    /// Paragraphs shown after the overview, each wrapped on its own.
    var discussion: [String] = []
    /// The ways to invoke the command, after its name: `[<options>] <source> <destination>`.
    /// The first is the one a usage error shows.
    var usage: [String]
    var arguments: [Row] = []
    var subcommands: [Row] = []
    /// Whether the command is internal: its usage errors do not point to a help it lacks.
    var isHidden = false

    /// The rows of the options that ``command`` takes, in the table's order (a refused option
    /// is not listed).
    var options: [Row] {
        CommandOption.listed(for: command).map { Row(label: $0.label, abstract: $0.abstract) }
    }

    /// The whole help, ending in a newline.
    func render() -> String {
        var lines = ("OVERVIEW: " + overview).wrapped(toColumns: Self.width)
        for paragraph in discussion {
            lines += [""] + paragraph.wrapped(toColumns: Self.width)
        }
        lines.append("")
        for (index, invocation) in usage.enumerated() {
            let lead = index == 0 ? "USAGE: " : String(repeating: " ", count: 7)
            lines += "\(command.invocation) \(invocation)".wrapped(toColumns: Self.width, after: lead, indent: 7)
        }
        for (title, rows) in [("ARGUMENTS", arguments), ("OPTIONS", options), ("SUBCOMMANDS", subcommands)] where !rows.isEmpty {
            lines += ["", "\(title):"] + rows.flatMap(Self.render)
        }
        if !subcommands.isEmpty {
            lines += ["", "  See '\(command.invocation) help <subcommand>' for detailed help."]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// What a usage error prints on standard error, as swift-argument-parser does: the
    /// message, the first usage, and where to get help.
    func usageError(_ error: UsageError) -> String {
        var text = "Error: \(error.message)\nUsage: \(command.invocation) \(usage[0])\n"
        if !isHidden { text += "  See '\(command.invocation) --help' for more information.\n" }
        return text
    }

    private static func render(_ row: Row) -> [String] {
        let label = "  " + row.label
        guard label.displayWidth < labelColumn else {
            return [label] + row.abstract.wrapped(
                toColumns: width, after: String(repeating: " ", count: labelColumn), indent: labelColumn)
        }
        let lead = label + String(repeating: " ", count: labelColumn - label.displayWidth)
        return row.abstract.wrapped(toColumns: width, after: lead, indent: labelColumn)
    }
}
