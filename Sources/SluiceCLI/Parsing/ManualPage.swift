/// The manual page `sluice --generate-manual` prints: troff with the `man` macros, for
/// `man(1)` (section 1, user commands), generated from the same help texts and option table as
/// `--help`, so the two never disagree.
///
/// Sections: NAME, SYNOPSIS (every usage of every subcommand), DESCRIPTION (the top-level help
/// and its options), one subsection per subcommand under COMMANDS (its overview, discussion,
/// arguments and options), SEE ALSO. A refused option is not listed, as in the help.
struct ManualPage {
    /// The page, ending in a newline.
    func render() -> String {
        let top = SluiceMain.help
        var lines = [
            #".TH SLUICE 1 "" "sluice \#(SluiceMain.version)" "User Commands""#,
            ".SH NAME",
            #"sluice \- "# + Self.escaped(Self.lowercasingFirst(top.overview).dropLastPeriod()),
            ".SH SYNOPSIS",
        ]
        for command in SluiceMain.subcommands {
            for usage in SluiceMain.help(for: command).usage {
                lines += [".br", #"\fB\#(command.invocation)\fR "# + Self.escaped(usage)]
            }
        }
        lines += [".br", #"\fBsluice help\fR [\fIsubcommand\fR]"#]
        lines.append(".SH DESCRIPTION")
        lines += Self.paragraphs([top.overview] + top.discussion)
        lines += Self.rows(top.options)
        lines.append(".SH COMMANDS")
        for command in SluiceMain.subcommands {
            let help = SluiceMain.help(for: command)
            lines.append(#".SS "\#(command.invocation)""#)
            lines += Self.paragraphs([help.overview] + help.discussion)
            lines += Self.rows(help.arguments)
            lines += Self.rows(help.options)
        }
        lines += [
            ".SS \"sluice help\"",
            ".PP",
            #"\fBsluice help\fR \fIsubcommand\fR prints the same help as \fBsluice\fR \fIsubcommand\fR \fB\-\-help\fR."#,
            ".SH \"SEE ALSO\"",
            ".BR cp (1),",
            ".BR gzip (1),",
            ".BR umask (2),",
            ".BR acl (5)",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// Each paragraph after `.PP`, escaped.
    private static func paragraphs(_ texts: [String]) -> [String] {
        texts.flatMap { [".PP", escaped($0)] }
    }

    /// Help rows as tagged paragraphs: the label in bold, its text below it.
    private static func rows(_ rows: [HelpText.Row]) -> [String] {
        rows.flatMap { row in [".TP", #"\fB"# + escaped(row.label) + #"\fR"#, escaped(row.abstract)] }
    }

    /// `text` as troff reads it literally: a backslash as `\e`, a hyphen as `\-` (a minus sign,
    /// which is what options are spelled with), and a line that would start with a control
    /// character (`.` or `'`) protected by `\&`.
    static func escaped(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "\\": result += #"\e"#
            case "-": result += #"\-"#
            default: result.append(character)
            }
        }
        if result.hasPrefix(".") || result.hasPrefix("'") { result = #"\&"# + result }
        return result
    }

    private static func lowercasingFirst(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.lowercased() + text.dropFirst()
    }
}

extension String {
    /// The text without a final period: a NAME line is not a sentence.
    fileprivate func dropLastPeriod() -> String {
        hasSuffix(".") ? String(dropLast()) : self
    }
}
