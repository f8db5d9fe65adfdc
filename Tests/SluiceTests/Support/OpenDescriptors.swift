#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Sluice
import SluiceTestSupport

/// What this process's open descriptors point at, as `/proc/self/fd` shows them
/// (`readlink(2)` of each entry): paths, `pipe:[inode]`, `socket:[inode]`, `anon_inode:...`.
///
/// Other suites run at the same time and open their own, so a test looks for its own targets
/// in the list (those below its scratch directory, its pipes), never at the count.
func openDescriptorTargets() -> [String] {
    let descriptors: Pathname = "/proc/self/fd"
    // An entry that cannot be read was closed meanwhile (the listing's own descriptor).
    return ((try? entries(in: descriptors)) ?? []).compactMap { try? target(of: descriptors.appending($0)) }
}

/// The open descriptors' targets that are `directory` or below it.
func openDescriptors(under directory: Pathname) -> [String] {
    let prefix = directory.description
    return openDescriptorTargets().filter { $0 == prefix || $0.hasPrefix(prefix + "/") }
}

/// What `descriptor` points at, as `/proc/self/fd` shows it: for a pipe's end, `pipe:[inode]`.
///
/// - Throws: the `ErrorNumber` of `readlink(2)`.
func descriptorTarget(_ descriptor: Descriptor) throws(ErrorNumber) -> String {
    try target(of: Pathname("/proc/self/fd/\(descriptor.rawValue)"))
}

private func target(of link: Pathname) throws(ErrorNumber) -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = link.withCString { readlink($0, &buffer, buffer.count - 1) }
    guard length >= 0 else { throw ErrorNumber(rawValue: errno) }
    return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
