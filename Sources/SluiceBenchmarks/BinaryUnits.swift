/// Byte counts written as the command line takes them: `512`, `4K`, `64K`, `1M`, `2G`.
public enum BinaryUnits {
    /// `bytes` with the largest binary unit (K = 1024, M, G, T) that divides it exactly, else
    /// as a plain count of bytes: 4096 → `4K`, 1_572_864 → `1536K`, 1000 → `1000`.
    public static func abbreviation(_ bytes: Int64) -> String {
        for (unit, shift) in [("T", Int64(40)), ("G", 30), ("M", 20), ("K", 10)] where bytes > 0 && bytes % (1 << shift) == 0 {
            return "\(bytes >> shift)\(unit)"
        }
        return String(bytes)
    }
}
