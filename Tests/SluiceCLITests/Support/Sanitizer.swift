import Foundation

/// The sanitizers the `sluice` under test is built with (`swift test --sanitize=...`), read from
/// the binary: a sanitized build links the runtime and its instrumented code calls the runtime's
/// entry point, so the binary holds that name.
///
/// Memory figures mean little under either: ThreadSanitizer roughly doubles a process's RSS,
/// AddressSanitizer's shadow memory and quarantine add more.
enum Sanitizer {
    static let threadSanitizerIsActive = binaryMentions("__tsan_init")
    static let addressSanitizerIsActive = binaryMentions("__asan_init")

    /// Whether either sanitizer inflates the binary's memory.
    static var inflatesMemory: Bool { threadSanitizerIsActive || addressSanitizerIsActive }

    private static func binaryMentions(_ symbol: String) -> Bool {
        guard let binary = FileManager.default.contents(atPath: CLI.binary) else { return false }
        return binary.range(of: Data(symbol.utf8)) != nil
    }
}
