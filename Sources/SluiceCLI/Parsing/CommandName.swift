/// The commands of `sluice`, spelled as on the command line: each entry of the option table
/// names the ones that take it.
enum CommandName: String, CaseIterable, Sendable {
    /// `sluice` itself, before any subcommand (`sluice --help`, `sluice --version`).
    case sluice
    case copy
    case compress
    case decompress
    case follow
    case bench
    /// The hidden child of `bench`: one design and one consumer, in a process of its own.
    case benchRun = "bench-run"

    /// How the command is invoked: `sluice`, or `sluice` and the subcommand.
    var invocation: String {
        self == .sluice ? "sluice" : "sluice \(rawValue)"
    }

    /// The subcommand typed as `name`; `nil` for anything else, `sluice` included.
    init?(subcommand name: String) {
        guard let command = CommandName(rawValue: name), command != .sluice else { return nil }
        self = command
    }
}
