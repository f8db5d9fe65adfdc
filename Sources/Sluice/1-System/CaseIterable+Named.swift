extension CaseIterable where Self: RawRepresentable, Self.RawValue: Equatable {
    /// The case whose raw value is `rawValue`, or `nil`: the one body of the `init?(rawValue:)`
    /// that Sluice's option enums (``FileChunks/HoleMode``, ``Copier/ReflinkMode``,
    /// ``CopyMethod``) write out so that their documentation names their spellings.
    package static func named(_ rawValue: RawValue) -> Self? {
        allCases.first { $0.rawValue == rawValue }
    }
}
