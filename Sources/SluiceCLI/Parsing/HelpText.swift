/// A command's help, in the swift-argument-parser layout: OVERVIEW, USAGE, ARGUMENTS, OPTIONS.
struct HelpText {
    var overview: String
    var usage: [String]
    var arguments: [(String, String)]
    var options: [(String, String)]
    var discussion: String? = nil
    /// The heading of the `arguments` list (`COMMANDS` for the top level).
    var argumentsTitle = "ARGUMENTS"

    static let commonOptions: [(String, String)] = [
        ("-f, --force", "overwrite an existing regular file (replaced atomically)"),
        ("--no-fsync", "skip fsync of the file and its directory (faster, not durable)"),
        ("--preserve", "keep the source's mode, times, and owner where permitted"),
        ("--chunk-size <size>", "bytes per chunk, binary units: 4096, 256K, 1M (default 1M)"),
        ("--capacity <n>", "chunks buffered between stages, at least 1 (default 4)"),
        ("--progress", "show progress on standard error (a bar on a terminal)"),
        ("--progress=json", "one JSON object per line on standard error"),
        ("-q, --quiet", "do not print warnings"),
        ("-v, --verbose", "print a report: bytes, CRC-32, time"),
        ("-h, --help", "show this help"),
        ("--version", "show the version"),
    ]

    func render() -> String {
        var text = "OVERVIEW: \(overview)\n\nUSAGE:"
        for line in usage { text += "\n  \(line)" }
        if !arguments.isEmpty {
            text += "\n\n\(argumentsTitle):"
            for (name, help) in arguments { text += Self.row(name, help) }
        }
        text += "\n\nOPTIONS:"
        for (name, help) in options { text += Self.row(name, help) }
        if let discussion { text += "\n\n" + discussion }
        return text + "\n"
    }

    private static func row(_ name: String, _ help: String) -> String {
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
        let column = 26
        var text = "\n  " + name
        if name.count + 2 >= column {
            text += "\n" + String(repeating: " ", count: column)
        } else {
            text += String(repeating: " ", count: column - 2 - name.count)
        }
        text += lines.joined(separator: "\n" + String(repeating: " ", count: column))
        return text
    }
}
