import Testing

@Suite struct CLIPlaceholderTests {
    @Test func placeholder() { #expect(Bool(true)) }
}
