extension UsageError {
    /// `message`, followed by `(did you mean 'X'?)` when one of `candidates` is close to
    /// `typed`: one of them begins with it (and no other does), or it is within a small edit
    /// distance (a letter or two wrong, missing, extra or swapped), as git and cargo suggest.
    static func withSuggestion(_ message: String, typed: String, candidates: [String], prefix: String = "") -> UsageError {
        guard let match = closest(to: typed, among: candidates) else { return UsageError(message) }
        return UsageError("\(message) (did you mean '\(prefix)\(match)'?)")
    }

    /// The candidate closest to `typed`, or `nil` when none is close enough.
    static func closest(to typed: String, among candidates: [String]) -> String? {
        guard !typed.isEmpty else { return nil }
        let starting = candidates.filter { $0.hasPrefix(typed) }
        if starting.count == 1 { return starting[0] }
        let limit = max(1, min(2, typed.count / 3))
        let scored = candidates.map { ($0, distance(Array(typed), Array($0))) }.filter { $0.1 <= limit }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        // Two equally close candidates: no suggestion rather than a guess.
        return scored.filter { $0.1 == best.1 }.count == 1 ? best.0 : nil
    }

    /// The optimal string alignment distance: insertions, deletions, substitutions and swaps
    /// of neighbours, each 1.
    private static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
