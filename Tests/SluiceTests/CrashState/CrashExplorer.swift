@testable import Sluice

/// Explores the crash states a trace allows (``CrashModel``'s persistence model, in the DocC
/// article on the commit point) and checks each against the scenario's promise.
///
/// For each crash point (after each operation of the trace, and before the first), the
/// operations not yet made durable by a later sync in the prefix may each be kept or lost: all
/// combinations where there are at most ``exhaustiveLimit``; otherwise all kept, all lost, each
/// one lost alone, each pair lost, each one kept alone, and ``samples`` random combinations
/// drawn from ``seed``. Each state is checked:
/// - every path of the state before or after the command holds its old entry, or its new one
///   (a file byte for byte, with its size), or is absent where it was absent before or after;
///   never a prefix, zeros or a mix, and never a file that was there before and is there after
///   gone at once;
/// - any other path is a leftover recognisable by its name (`.sluice-<12>.tmp`): a directory,
///   a link or a file the operation makes is there only under its final name;
/// - a file at its final name with its final content has a mode no wider than its final one;
///   a directory being made, none wider than its final one or `0700`;
/// - a source that may be removed is absent only where its copy is complete;
/// - once the command returned (the crash point after the last operation) every state is the
///   final one on every path (durability).
///
/// A scenario whose promise is not old-or-new (a file that grows in place, as `follow` ships
/// one) gives its own ``rule`` instead, checked in each state.
struct CrashExplorer {
    var initial: CrashModel
    var operations: [CrashOperation]
    var final: CrashModel
    /// Paths (relative to the root) a command may remove, each with the path whose complete
    /// content must then be there (`--rm`).
    var removals: [(source: [UInt8], copy: [UInt8])] = []
    var exhaustiveLimit = 10
    var samples = 64
    var seed: UInt64 = 0x5EED
    /// The most states checked at one crash point (a bound for the sanitizers' runs).
    var maximumStatesPerPoint = Int.max
    /// A scenario's own promise, checked in each crash state instead of the rules above: what
    /// it finds wrong in the state (none: it holds); `returned` for the crash point after the
    /// last operation.
    var rule: (@Sendable (_ state: CrashModel, _ returned: Bool) -> [String])?

    struct Violation: CustomStringConvertible {
        var point: Int
        var lost: [Int]
        var message: String
        var description: String { "crash after operation \(point) with \(lost) lost: \(message)" }
    }

    struct Report {
        var points = 0
        var states = 0
        var distinctStates = 0
        var violations: [Violation] = []
    }

    func explore() -> Report {
        let initialEntries = initial.entries()
        let finalEntries = final.entries()
        var report = Report()
        var distinct: Set<Int> = []
        var generator = SplitMix64(seed: seed)
        for point in 0...operations.count {
            report.points += 1
            let pending = (0..<point).filter { index in
                operations[index].domain != nil && !operations[index].isMadeDurable(by: operations[(index + 1)..<point])
            }
            // A bound below every combination: the chosen ones first (all kept, all lost, each
            // lost alone, each kept alone, each pair lost), then the seeded ones.
            let exhaustive = pending.count <= exhaustiveLimit && 1 << pending.count <= maximumStatesPerPoint
            for lost in Self.lostSets(pending, exhaustiveLimit: exhaustive ? exhaustiveLimit : -1, samples: samples, generator: &generator)
                .prefix(maximumStatesPerPoint) {
                var state = initial
                let dropped = Set(lost)
                for index in 0..<point where !dropped.contains(index) { state.apply(operations[index]) }
                report.states += 1
                let entries = state.entries()
                distinct.insert(entries.hashValue)
                let returned = point == operations.count
                let messages = rule.map { $0(state, returned) } ?? check(entries, initial: initialEntries, final: finalEntries, returned: returned)
                for message in messages {
                    report.violations.append(Violation(point: point, lost: lost, message: message))
                }
                if report.violations.count > 20 { break }
            }
        }
        report.distinctStates = distinct.count
        return report
    }

    /// The sets of pending operations a crash loses, to explore at one point.
    static func lostSets(_ pending: [Int], exhaustiveLimit: Int, samples: Int, generator: inout SplitMix64) -> [[Int]] {
        if pending.count <= exhaustiveLimit || pending.isEmpty {
            return (0..<(1 << pending.count)).map { mask in pending.indices.filter { mask & (1 << $0) != 0 }.map { pending[$0] } }
        }
        var sets: [[Int]] = [[], pending]
        for one in pending { sets.append([one]) }
        for one in pending { sets.append(pending.filter { $0 != one }) }
        for (position, first) in pending.enumerated() {
            for second in pending[(position + 1)...] { sets.append([first, second]) }
        }
        for _ in 0..<samples { sets.append(pending.filter { _ in generator.next() & 1 == 0 }) }
        return sets
    }

    private func check(
        _ entries: [[UInt8]: CrashModel.Entry], initial: [[UInt8]: CrashModel.Entry], final: [[UInt8]: CrashModel.Entry],
        returned: Bool
    ) -> [String] {
        var messages: [String] = []
        for path in Set(initial.keys).union(final.keys) {
            let name = String(decoding: path, as: UTF8.self)
            let now = entries[path]
            let (before, after) = (initial[path], final[path])
            if returned {
                if now != after { messages.append("'\(name)' is not its final self after the command returned: \(Self.show(now))") }
                continue
            }
            if let now {
                guard now != before && now != after else { continue }
                switch (now, after) {
                case (.file(let content, let mode), .file(let finalContent, let finalMode)?) where content == finalContent:
                    // Complete, its bits not yet the final ones: never wider than those.
                    if mode & ~finalMode != 0 {
                        messages.append("'\(name)' is complete with mode \(String(mode, radix: 8)), wider than its final \(String(finalMode, radix: 8))")
                    }
                case (.directory(let mode), _):
                    // Its entries are checked on their own paths; a directory being made is
                    // private to its owner (`0700 | mode`) until its attributes come.
                    guard case .directory(let finalMode)? = after ?? before else {
                        messages.append("'\(name)' is a directory, neither old nor new")
                        break
                    }
                    if mode & ~(finalMode | 0o700) != 0 {
                        messages.append("'\(name)' is a directory of mode \(String(mode, radix: 8)), wider than \(String(finalMode, radix: 8)) and 700")
                    }
                default:
                    messages.append("'\(name)' holds neither its old nor its new entry: \(Self.show(now))")
                }
            } else if before != nil && after != nil {
                messages.append("'\(name)' is gone: neither its old entry nor its new one is there")
            }
        }
        for (path, entry) in entries where initial[path] == nil && final[path] == nil {
            let lastComponent = path.split(separator: UInt8(ascii: "/")).last.map(Array.init) ?? path
            if Descriptor.isTemporaryName(lastComponent) { continue }
            messages.append("'\(String(decoding: path, as: UTF8.self))' is neither an old nor a new entry: \(Self.show(entry))")
        }
        for (source, copy) in removals where entries[source] == nil && initial[source] != nil && entries[copy] != final[copy] {
            messages.append("'\(String(decoding: source, as: UTF8.self))' is removed while its copy is \(Self.show(entries[copy]))")
        }
        return messages
    }

    private static func show(_ entry: CrashModel.Entry?) -> String {
        switch entry {
        case nil: "absent"
        case .file(let content, let mode)?:
            "a file of \(content.count) bytes (\(content.allSatisfy { $0 == 0 } ? "all zeros" : "data")), mode \(String(mode, radix: 8))"
        case .directory(let mode)?: "a directory of mode \(String(mode, radix: 8))"
        case .symbolicLink(let target)?: "a link to '\(String(decoding: target, as: UTF8.self))'"
        case .special(let mode)?: "a node of mode \(String(mode, radix: 8))"
        }
    }
}
