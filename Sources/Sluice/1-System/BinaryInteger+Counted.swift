extension BinaryInteger {
    /// The count and its noun, singular for one: `1 file`, `2 files`, `1 directory`,
    /// `3 directories` (`plural` when the noun does not take an `s`). What every message that
    /// counts something says it with.
    package func counted(_ singular: String, plural: String? = nil) -> String {
        "\(self) " + (self == 1 ? singular : plural ?? singular + "s")
    }
}
