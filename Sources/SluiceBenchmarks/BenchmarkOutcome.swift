/// How one benchmark run ended.
public enum BenchmarkOutcome: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Every byte arrived.
    case ok
    /// A push source met its capacity with the `.fail` policy (expected for `push-fail`).
    case capacityExceeded
    /// Anything else, with its message.
    case error(String)

    /// `ok`, `capacity-exceeded`, or `error: ` and the message: the CSV's `outcome` field.
    public var description: String {
        switch self {
        case .ok: return "ok"
        case .capacityExceeded: return "capacity-exceeded"
        case .error(let message): return "error: \(message)"
        }
    }
}
